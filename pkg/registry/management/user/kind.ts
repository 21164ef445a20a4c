// User: an identity kind, with access rules of its own and the `accesskeys`
// subresource listing the user's keys. Passwords and codes are references to
// secrets kept elsewhere, never values, so nothing here is sensitive.

import { userInfo, userSchema } from '../../../apis/management/v1/user.js';
import { accessKeysOfOwner } from '../access-keys/subresource.js';
import type { KindDefinition } from '../kind.js';
import { userStrategy } from './strategy.js';

export const userKind: KindDefinition = {
  info: userInfo,
  schema: userSchema,
  strategy: (group) => userStrategy(group),
  traits: {
    identity: true,
    accessRules: true,
    sensitiveFields: [],
    encryptedByDefault: false,
  },
  subresources: accessKeysOfOwner('user'),
};
