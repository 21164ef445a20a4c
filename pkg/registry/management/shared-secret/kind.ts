// SharedSecret (Global Secrets): its data is the secret material of this API, so
// it is encrypted at rest by default and `spec.data` is never logged or audited.

import { sharedSecretInfo, sharedSecretSchema } from '../../../apis/management/v1/shared-secret.js';
import type { KindDefinition } from '../kind.js';
import { sharedSecretStrategy } from './strategy.js';

export const sharedSecretKind: KindDefinition = {
  info: sharedSecretInfo,
  schema: sharedSecretSchema,
  strategy: (group) => sharedSecretStrategy(group),
  traits: {
    identity: false,
    accessRules: true,
    sensitiveFields: ['spec.data'],
    encryptedByDefault: true,
  },
};
