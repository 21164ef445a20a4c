// A caller authenticated by a direct cluster endpoint token may never mint
// credentials. A token is accepted only while the access key it was minted with is
// usable, but what the token could mint would not be: a new access key lives on
// after the first key is revoked, a new token would name a key the holder controls,
// and a client certificate signed by the host can never be revoked at all. So,
// whatever else the caller may do (even an administrator's token):
//
//   ownedaccesskeys                      create, update, patch, delete, deletecollection
//                                        (any subresource: status.lastActivity keeps a key alive)
//   directclusterendpointtokens          create
//   virtualclusterinstances/kubeconfig   create
//
// are denied, first in the chain so no later rule can allow them. The 403 is
// upstream's forbidden message plus this reason.

import { NO_OPINION, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

export const TOKEN_CANNOT_MINT_REASON =
  'a direct cluster endpoint token cannot mint credentials (access keys, tokens, kube configs); use an access key';

const KEY_WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Whether the request would make, change or remove a credential of this API group. */
export function mintsCredentials(attrs: Attributes, group: string): boolean {
  if (!attrs.isResourceRequest || attrs.apiGroup !== group) return false;
  switch (attrs.resource) {
    case 'ownedaccesskeys':
      return KEY_WRITES.has(attrs.verb);
    case 'directclusterendpointtokens':
      return attrs.verb === 'create';
    case 'virtualclusterinstances':
      return attrs.subresource === 'kubeconfig' && attrs.verb === 'create';
    default:
      return false;
  }
}

export class CredentialMintingAuthorizer implements Authorizer {
  constructor(private readonly group: string) {}

  authorize(attrs: Attributes): AuthorizationResult {
    if (attrs.user.tokenDerived === true && mintsCredentials(attrs, this.group)) {
      return { decision: 'deny', reason: TOKEN_CANNOT_MINT_REASON };
    }
    return NO_OPINION;
  }
}
