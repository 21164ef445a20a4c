// Encryption at rest (issue 14): kube-apiserver's --encryption-provider-config
// flags. What they turn on is set up by pkg/server/encryption.ts.

import type { OptionGroup } from './option-group.js';

export interface EncryptionOptionValues {
  /** EncryptionConfiguration file ('' = the generated default on sqlite, none on etcd3). */
  encryptionProviderConfig: string;
  encryptionProviderConfigAutomaticReload: boolean;
}

export const encryptionOptions = {
  title: 'Encryption at rest flags',
  flags: [
    {
      name: 'encryption-provider-config',
      field: 'encryptionProviderConfig',
      kind: 'string',
      usage:
        "kube-apiserver's EncryptionConfiguration (apiserver.config.k8s.io/v1) file: which resources are encrypted at rest and with which providers (the first encrypts, each is tried to decrypt). Empty: with --storage-backend sqlite, Global Secrets are encrypted with a secretbox key generated into <data-dir>/pki/encryption-config.yaml; with etcd3, nothing is encrypted.",
      default: '',
    },
    {
      name: 'encryption-provider-config-automatic-reload',
      field: 'encryptionProviderConfigAutomaticReload',
      kind: 'bool',
      usage:
        'Read the encryption provider configuration again when its file changes (checked every few seconds); a file that does not load keeps the configuration in force. false: only at start.',
      default: false,
    },
  ],
  complete() {},
  // The file itself is read (and its problems reported) when the server starts.
  validate: () => [],
} satisfies OptionGroup<EncryptionOptionValues>;
