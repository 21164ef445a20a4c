// Team: an identity kind (members decide who a caller is), with access rules of
// its own and the `accesskeys` subresource listing the team's keys.

import { teamInfo, teamSchema } from '../../../apis/management/v1/team.js';
import { accessKeysOfOwner } from '../access-keys/subresource.js';
import type { KindDefinition } from '../kind.js';
import { teamStrategy } from './strategy.js';

export const teamKind: KindDefinition = {
  info: teamInfo,
  schema: teamSchema,
  strategy: (group) => teamStrategy(group),
  traits: {
    identity: true,
    accessRules: true,
    sensitiveFields: [],
    encryptedByDefault: false,
  },
  subresources: accessKeysOfOwner('team'),
};
