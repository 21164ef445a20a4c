// DirectClusterEndpointToken (cluster scoped, create only): asks the platform for a
// signed, short-lived token that a connected cluster verifies on its own (with the
// published JWKS), so a client can talk to that cluster directly instead of through
// the platform. Nothing is stored: the token comes back in status.token, once.

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessKeyScopeSchema,
  kindSchema,
  VERSION,
  type AccessKeyScope,
  type TypedObject,
} from './common.js';
import { int64, obj, str, type JSONSchema } from './schema-builders.js';

export interface DirectClusterEndpointTokenSpec {
  /** Lifetime of the token in seconds. */
  ttl?: number;
  scope?: AccessKeyScope;
}

export interface DirectClusterEndpointTokenStatus {
  token?: string;
}

export type DirectClusterEndpointToken = TypedObject<
  DirectClusterEndpointTokenSpec,
  DirectClusterEndpointTokenStatus
>;

export function directClusterEndpointTokenInfo(group: string): ResourceInfo {
  return {
    group,
    version: VERSION,
    resource: 'directclusterendpointtokens',
    singular: 'directclusterendpointtoken',
    kind: 'DirectClusterEndpointToken',
    listKind: 'DirectClusterEndpointTokenList',
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
  };
}

export function directClusterEndpointTokenSchema(): JSONSchema {
  return kindSchema(
    'DirectClusterEndpointToken issues a signed token for connecting to a connected cluster directly, bypassing the platform. Create it; the token is in status.token of the response and is not stored.',
    obj('What token to issue.', {
      ttl: int64(
        "Lifetime of the token in seconds. Required: at least 1 and at most the server's maximum (--max-token-ttl).",
      ),
      scope: {
        ...accessKeyScopeSchema(),
        description:
          'Limits what the token may reach. It must not be wider than what the caller may do: a caller using a scoped access key gets at most that scope, and omitting the scope then gives the token the key’s scope.',
      },
    }),
    obj('The issued token. Set by the server.', {
      token: str(
        'The signed token (a JWT). Send it as a bearer token to the connected cluster. Empty on a dry run.',
      ),
    }),
  );
}
