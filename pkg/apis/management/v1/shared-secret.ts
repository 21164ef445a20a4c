// SharedSecret (namespaced): sensitive data shared with users, teams and connected
// clusters; shown in the UI as a Global Secret. Its data values are bytes, carried
// as standard base64 strings on the wire, like a Kubernetes Secret's data.

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessRulesSchema,
  conditionsSchema,
  kindSchema,
  ownerSchema,
  storedKindInfo,
  type AccessRule,
  type Condition,
  type TypedObject,
  type UserOrTeam,
} from './common.js';
import { bytes, obj, str, type JSONSchema } from './schema-builders.js';

export interface SharedSecretSpec {
  displayName?: string;
  description?: string;
  owner?: UserOrTeam;
  /** Key → base64 of the value's bytes. */
  data?: Record<string, string>;
  access?: AccessRule[];
}

export interface SharedSecretStatus {
  conditions?: Condition[];
}

export type SharedSecret = TypedObject<SharedSecretSpec, SharedSecretStatus>;

export function sharedSecretInfo(group: string): ResourceInfo {
  return storedKindInfo(group, {
    resource: 'sharedsecrets',
    singular: 'sharedsecret',
    kind: 'SharedSecret',
    namespaced: true,
  });
}

export function sharedSecretSchema(): JSONSchema {
  return kindSchema(
    'SharedSecret holds sensitive data shared with users, teams and connected clusters (a Global Secret in the UI). It can be read with the command-line client or synced to a project secret.',
    obj('Desired state of the shared secret: its data and who may use it.', {
      displayName: str('Name shown in the UI.'),
      description: str('What the shared secret is for.'),
      owner: ownerSchema(),
      data: {
        type: 'object',
        description:
          'The secret data. Keys consist of alphanumeric characters, `-`, `_` or `.`; each value is base64 encoded (RFC 4648 section 4, with padding), as in a Kubernetes Secret.',
        additionalProperties: bytes('Base64-encoded bytes of the value.'),
      },
      access: accessRulesSchema('shared secret'),
    }),
    obj(
      'Observed state of the shared secret. Written through the status subresource; writes to the main resource keep it as stored.',
      {
        conditions: conditionsSchema('shared secret'),
      },
    ),
  );
}
