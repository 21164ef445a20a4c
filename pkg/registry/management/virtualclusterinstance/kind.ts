// VirtualClusterInstance: access rules of its own, and the `kubeconfig`
// subresource when the server can issue credentials (the token services build it).

import {
  virtualClusterInstanceInfo,
  virtualClusterInstanceSchema,
} from '../../../apis/management/v1/virtual-cluster-instance.js';
import type { KindDefinition } from '../kind.js';
import { virtualClusterInstanceStrategy } from './strategy.js';

export const virtualClusterInstanceKind: KindDefinition = {
  info: virtualClusterInstanceInfo,
  schema: virtualClusterInstanceSchema,
  strategy: (group, options) => virtualClusterInstanceStrategy(group, options.virtualClusterInstances),
  traits: {
    identity: false,
    accessRules: true,
    sensitiveFields: [],
    encryptedByDefault: false,
  },
  subresources: ({ store, options }) => {
    const kubeConfig = options.virtualClusterInstances?.kubeConfig;
    return kubeConfig ? [kubeConfig(store)] : [];
  },
};
