// OwnedAccessKey: an identity kind (a key is a caller's credential). Its rights
// are its owner's (authorization/self.ts), not access rules of its own. A write
// may carry the plain key in `spec.key` (storage keeps only its hash).

import { ownedAccessKeyInfo, ownedAccessKeySchema } from '../../../apis/management/v1/owned-access-key.js';
import type { KindDefinition } from '../kind.js';
import { ownedAccessKeyStrategy } from './strategy.js';

export const ownedAccessKeyKind: KindDefinition = {
  info: ownedAccessKeyInfo,
  schema: ownedAccessKeySchema,
  strategy: (group, options) => ownedAccessKeyStrategy(group, options.accessKeys),
  traits: {
    identity: true,
    accessRules: false,
    sensitiveFields: ['spec.key'],
    encryptedByDefault: false,
  },
};
