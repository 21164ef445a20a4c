// Parts of the server that can be turned on or off (kube-apiserver's FeatureOptions;
// the garbage collector's flag is kube-controller-manager's).

import type { OptionGroup } from './option-group.js';

export interface FeatureOptionValues {
  /**
   * Run the in-server garbage collector (kube-controller-manager's flag name).
   * Unset: on without a host cluster, off with one (the host's collector does the
   * work there, and two collectors must never both act).
   */
  enableGarbageCollector: boolean | undefined;
}

export const featureOptions = {
  title: 'Feature flags',
  flags: [
    {
      name: 'enable-garbage-collector',
      field: 'enableGarbageCollector',
      kind: 'bool',
      usage:
        'Run the garbage collector inside the server: objects whose owners (metadata.ownerReferences) are all gone are deleted, and the orphan and foregroundDeletion finalizers are honoured. With it off, and no host cluster, a delete adds no deletion finalizer. Off by default when a host cluster is configured, whose kube-controller-manager collects garbage instead.',
      default: undefined,
      defaultText: 'true without a host cluster',
    },
  ],
  complete() {},
  validate: () => [],
} satisfies OptionGroup<FeatureOptionValues>;
