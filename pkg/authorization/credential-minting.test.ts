import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AuthenticatedUser } from '../authentication/user/user.js';
import {
  CERTIFICATE_CANNOT_MINT_REASON,
  CredentialMintingAuthorizer,
  IMPERSONATION_CANNOT_MINT_REASON,
  TOKEN_CANNOT_MINT_REASON,
} from './credential-minting.js';
import type { Attributes, AuthorizationResult } from './interfaces.js';

const GROUP = 'management.platform.dev';
const authorizer = new CredentialMintingAuthorizer(GROUP);

const token: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'], tokenDerived: true };
const key: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'], accessKeyName: 'k' };

function attrs(
  user: AuthenticatedUser,
  verb: string,
  resource: string,
  subresource = '',
  group = GROUP,
): Attributes {
  return {
    user,
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: group,
    apiVersion: 'v1',
    resource,
    subresource,
    namespace: resource === 'virtualclusterinstances' ? 'p-a' : '',
    name: '',
  };
}

async function expectDecisions(
  questions: readonly Attributes[],
  expected: AuthorizationResult,
): Promise<void> {
  for (const a of questions) {
    const label = `${a.user.tokenDerived ? 'token' : 'key'}: ${a.verb} ${a.apiGroup} ${a.resource}/${a.subresource}`;
    assert.deepEqual(await authorizer.authorize(a), expected, label);
  }
}

describe('CredentialMintingAuthorizer', () => {
  it('denies a token-derived caller every write of access keys, new tokens and kube configs', async () => {
    const keyWrites = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const minting = [
      ...keyWrites.map((verb) => attrs(token, verb, 'ownedaccesskeys')),
      attrs(token, 'patch', 'ownedaccesskeys', 'status'),
      attrs(token, 'create', 'directclusterendpointtokens'),
      attrs(token, 'create', 'virtualclusterinstances', 'kubeconfig'),
    ];
    await expectDecisions(minting, { decision: 'deny', reason: TOKEN_CANNOT_MINT_REASON });
    assert.match(TOKEN_CANNOT_MINT_REASON, /cannot mint credentials/);
  });

  it('denies a client certificate made with an access key the same, saying so', async () => {
    // As CertificateBindingAuthenticator marks one: a host identity, token-derived.
    const cert: AuthenticatedUser = {
      name: 'alice',
      groups: ['system:authenticated'],
      hostIdentity: true,
      tokenDerived: true,
    };
    const minting = [
      attrs(cert, 'create', 'ownedaccesskeys'),
      attrs(cert, 'create', 'directclusterendpointtokens'),
      attrs(cert, 'create', 'virtualclusterinstances', 'kubeconfig'),
    ];
    await expectDecisions(minting, { decision: 'deny', reason: CERTIFICATE_CANNOT_MINT_REASON });
    // A certificate bound to its User alone (no key) mints as the User may.
    const userBound: AuthenticatedUser = { ...cert, tokenDerived: false };
    await expectDecisions([attrs(userBound, 'create', 'virtualclusterinstances', 'kubeconfig')], {
      decision: 'no-opinion',
    });
  });

  it('denies an impersonated request every credential, whoever impersonates', async () => {
    const impersonated: AuthenticatedUser = {
      name: 'bob',
      groups: ['system:authenticated'],
      impersonator: { name: 'admin', groups: ['platform:admins', 'system:authenticated'] },
    };
    const minting = [
      attrs(impersonated, 'create', 'ownedaccesskeys'),
      attrs(impersonated, 'patch', 'ownedaccesskeys'),
      attrs(impersonated, 'delete', 'ownedaccesskeys'),
      attrs(impersonated, 'create', 'directclusterendpointtokens'),
      attrs(impersonated, 'create', 'virtualclusterinstances', 'kubeconfig'),
    ];
    await expectDecisions(minting, { decision: 'deny', reason: IMPERSONATION_CANNOT_MINT_REASON });
    // Reading is not minting.
    await expectDecisions([attrs(impersonated, 'get', 'ownedaccesskeys')], { decision: 'no-opinion' });
  });

  it('has no opinion on anything else, nor on callers that used no token', async () => {
    const others = [
      ...['get', 'list', 'watch'].map((verb) => attrs(token, verb, 'ownedaccesskeys')),
      attrs(token, 'get', 'users'),
      attrs(token, 'update', 'users'),
      attrs(token, 'create', 'selves'),
      attrs(token, 'get', 'virtualclusterinstances'),
      attrs(token, 'create', 'ownedaccesskeys', '', 'other.example.com'),
      attrs(key, 'create', 'ownedaccesskeys'),
      attrs(key, 'create', 'directclusterendpointtokens'),
      attrs(key, 'create', 'virtualclusterinstances', 'kubeconfig'),
      { ...attrs(token, 'post', ''), isResourceRequest: false, path: '/apis' },
    ];
    await expectDecisions(others, { decision: 'no-opinion' });
  });
});
