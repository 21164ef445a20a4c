// A caller authenticated by a direct cluster endpoint token, or by a kube config
// client certificate bound to an access key, may never mint credentials; nor may
// a request served as an impersonated user (Impersonate-User): kube-apiserver has
// no credential that an impersonator could make for its target and that would
// outlive the request, and an access key, token or kube config made here would. Either is
// accepted only while the access key it was made with is usable, but what it could
// mint would not be: a new access key lives on
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
// upstream's forbidden message plus the reason for the credential used (a
// certificate's identity is a host identity; a token's never is).

import { NO_OPINION, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

export const TOKEN_CANNOT_MINT_REASON =
  'a direct cluster endpoint token cannot mint credentials (access keys, tokens, kube configs); use an access key';

export const CERTIFICATE_CANNOT_MINT_REASON =
  'a client certificate made with an access key cannot mint credentials (access keys, tokens, kube configs); use the access key';

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

export const IMPERSONATION_CANNOT_MINT_REASON =
  'an impersonated request cannot mint credentials (access keys, tokens, kube configs): they would outlive the impersonation';

export class CredentialMintingAuthorizer implements Authorizer {
  constructor(private readonly group: string) {}

  authorize(attrs: Attributes): AuthorizationResult {
    if (attrs.user.impersonator !== undefined && mintsCredentials(attrs, this.group)) {
      return { decision: 'deny', reason: IMPERSONATION_CANNOT_MINT_REASON };
    }
    if (attrs.user.tokenDerived === true && mintsCredentials(attrs, this.group)) {
      const reason =
        attrs.user.hostIdentity === true ? CERTIFICATE_CANNOT_MINT_REASON : TOKEN_CANNOT_MINT_REASON;
      return { decision: 'deny', reason };
    }
    return NO_OPINION;
  }
}
