import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { before, beforeEach, describe, it } from 'node:test';
import jwt from 'jsonwebtoken';

import { isApiError } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { SigningKeyManager } from '../tokens/key-manager.js';
import { MemoryKeyStore } from '../tokens/key-store.js';
import { TokenIssuer } from '../tokens/token-issuer.js';
import { accessKeyDigest } from './access-key.js';
import { AccessKeyUsability } from './access-key-usability.js';
import {
  EndpointTokenAuthenticator,
  TOKEN_EXPIRED_MESSAGE,
  TOKEN_NOT_FOR_MANAGEMENT_MESSAGE,
} from './endpoint-token.js';
import { memoryIdentitySource } from './testing/identity-source.js';

const ISSUER = 'https://platform.example.com';
const AUDIENCE = 'management.platform.dev';
const ANNOTATION = tokenGenerationAnnotation(AUDIENCE);

let time = new Date('2026-07-01T00:00:00Z');
const now = (): Date => time;

function user(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: `${AUDIENCE}/v1`, kind: 'User', metadata: { name }, spec };
}

/** A stored key (its value is `value-<name>` unless spec.key says otherwise). */
function accessKey(name: string, uid: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: `${AUDIENCE}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name, uid, creationTimestamp: time.toISOString() },
    spec: { key: hashAccessKey(`value-${name}`), ...spec },
  };
}

/** The identity cache as the authenticators read it. */
const cache = memoryIdentitySource();
const { users, teams, keys } = cache;

let issuer: TokenIssuer;
let authenticator: EndpointTokenAuthenticator;

function request(token: string): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
}

async function failure(token: string): Promise<{ code: number; message: string }> {
  try {
    await authenticator.authenticate(request(token));
  } catch (err) {
    assert.ok(isApiError(err));
    return { code: err.code, message: err.message };
  }
  assert.fail('expected the token to be refused');
}

async function unauthorized(token: string): Promise<string> {
  const { code, message } = await failure(token);
  assert.equal(code, 401, message);
  return message;
}

/** A token minted with key `name` of `owner` (as the DirectClusterEndpointToken resource mints one). */
async function tokenOfKey(
  name: string,
  owner: string,
  options: { scope?: AccessKeyScope; tokenGeneration?: number; groups?: string[] } = {},
): Promise<string> {
  const key = keys.get(name);
  assert.ok(key?.metadata.uid);
  const { token } = await issuer.issue({
    subject: owner,
    ttlSeconds: 600,
    accessKey: { name, uid: key.metadata.uid, digest: accessKeyDigest(key, keyRevisionAnnotation(AUDIENCE)) },
    ...options,
  });
  return token;
}

const REVOKED_BY_KEY = /^this direct cluster endpoint token no longer works because the access key "k-bob" /;

before(async () => {
  const signing = new SigningKeyManager({
    store: new MemoryKeyStore(),
    rotationPeriodMs: 0,
    gracePeriodMs: 3600_000,
    now,
  });
  await signing.init();
  issuer = new TokenIssuer(signing, { issuer: ISSUER, audience: AUDIENCE, now });
  const usability = new AccessKeyUsability(cache, {
    generationAnnotation: ANNOTATION,
    formerOwnerAnnotation: formerOwnerAnnotation(AUDIENCE),
    revisionAnnotation: keyRevisionAnnotation(AUDIENCE),
    now: () => time.getTime(),
    syncTimeoutMs: 10,
  });
  authenticator = new EndpointTokenAuthenticator(issuer, usability);
});

beforeEach(() => cache.clear());

describe('EndpointTokenAuthenticator', () => {
  it('authenticates the user of a usable key, with the key’s groups and the token’s scope, marked token-derived', async () => {
    users.set('alice', user('alice', { tokenGeneration: 2, groups: ['sso'] }));
    keys.set('k-alice', accessKey('k-alice', 'u1', { user: 'alice', groups: ['dev'] }));
    keys.get('k-alice')!.metadata.annotations = { [ANNOTATION]: '2' };
    const scope = { projects: [{ project: 'a' }] };
    const token = await tokenOfKey('k-alice', 'alice', { groups: ['dev', 'sso'], scope, tokenGeneration: 2 });
    assert.deepEqual(await authenticator.authenticate(request(token)), {
      name: 'alice',
      groups: ['dev', 'sso', 'system:authenticated'],
      tokenDerived: true,
      scope,
    });
  });

  it('has only the groups the key and its user have now, whatever the token claims', async () => {
    users.set('alice', user('alice'));
    keys.set('k-alice', accessKey('k-alice', 'u1', { user: 'alice' }));
    const token = await tokenOfKey('k-alice', 'alice', { groups: ['dev', 'platform:admins'] });
    assert.deepEqual((await authenticator.authenticate(request(token)))?.groups, ['system:authenticated']);
  });

  it('fails once the key’s scope no longer covers the token’s', async () => {
    users.set('alice', user('alice'));
    const wide = { projects: [{ project: '*' }] };
    keys.set('k-alice', accessKey('k-alice', 'u1', { user: 'alice', scope: wide }));
    const token = await tokenOfKey('k-alice', 'alice', { scope: { projects: [{ project: 'a' }] } });
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'alice');
    keys.set(
      'k-alice',
      accessKey('k-alice', 'u1', { user: 'alice', scope: { projects: [{ project: 'b' }] } }),
    );
    assert.match(
      await unauthorized(token),
      /^the scope of the access key "k-alice" no longer covers this direct cluster endpoint token's \(projects\[0\] \(a\)\); request a new token$/,
    );
    const unscoped = await tokenOfKey('k-alice', 'alice');
    assert.match(await unauthorized(unscoped), /no longer covers .*an unlimited scope/);
  });

  it('fails once the token expired, saying so', async () => {
    users.set('alice', user('alice'));
    keys.set('k-alice', accessKey('k-alice', 'u1', { user: 'alice' }));
    const { token } = await issuer.issue({
      subject: 'alice',
      ttlSeconds: 60,
      tokenGeneration: 0,
      accessKey: {
        name: 'k-alice',
        uid: 'u1',
        digest: accessKeyDigest(keys.get('k-alice')!, keyRevisionAnnotation(AUDIENCE)),
      },
    });
    time = new Date(time.getTime() + 60_000);
    assert.equal(await unauthorized(token), TOKEN_EXPIRED_MESSAGE);
  });

  it('refuses tokens minted without an access key (front-proxy, x509, TokenReview callers, older tokens)', async () => {
    users.set('alice', user('alice'));
    const { token } = await issuer.issue({ subject: 'alice', ttlSeconds: 600, tokenGeneration: 0 });
    assert.equal(await unauthorized(token), TOKEN_NOT_FOR_MANAGEMENT_MESSAGE);
    assert.match(TOKEN_NOT_FOR_MANAGEMENT_MESSAGE, /for the connected cluster, not the management API/);
  });

  it('fails once the key is deleted, or replaced by another key of the same name', async () => {
    users.set('bob', user('bob'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob' }));
    const token = await tokenOfKey('k-bob', 'bob');
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
    const gone = `the access key "k-bob" this direct cluster endpoint token was minted with no longer exists; request a new token with a working key`;
    keys.delete('k-bob');
    assert.equal(await unauthorized(token), gone);
    keys.set('k-bob', accessKey('k-bob', 'u2', { user: 'bob' }));
    assert.equal(await unauthorized(token), gone);
  });

  it('fails once the key’s value is rotated (a leaked value takes its tokens with it)', async () => {
    users.set('bob', user('bob'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob' }));
    const token = await tokenOfKey('k-bob', 'bob');
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob', key: hashAccessKey('a new value') }));
    assert.equal(
      await unauthorized(token),
      'the access key "k-bob" was rotated since this direct cluster endpoint token was minted; request a new token with its new value',
    );
    assert.doesNotMatch(
      accessKeyDigest(keys.get('k-bob')!, keyRevisionAnnotation(AUDIENCE)),
      /[a-f0-9]{64}/,
      'no stored hash in a claim',
    );
  });

  it('fails while the key is disabled, and works again when it is enabled', async () => {
    users.set('bob', user('bob'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob', disabled: true }));
    const token = await tokenOfKey('k-bob', 'bob');
    const message = await unauthorized(token);
    assert.match(message, REVOKED_BY_KEY);
    assert.match(message, /the access key "k-bob" is disabled/);
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob', disabled: false }));
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
  });

  it('fails once the key’s ttl ran out, though the token itself has not', async () => {
    users.set('bob', user('bob'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob', ttl: 30 }));
    const token = await tokenOfKey('k-bob', 'bob');
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
    time = new Date(time.getTime() + 30_000);
    const message = await unauthorized(token);
    assert.equal(
      message,
      'this direct cluster endpoint token no longer works because the access key "k-bob" expired; please log in again',
    );
  });

  it('fails after the user bumps tokenGeneration past the key’s and the token’s', async () => {
    users.set('bob', user('bob', { tokenGeneration: 1 }));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob' }));
    keys.get('k-bob')!.metadata.annotations = { [ANNOTATION]: '1' };
    const token = await tokenOfKey('k-bob', 'bob', { tokenGeneration: 1 });
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
    users.set('bob', user('bob', { tokenGeneration: 2 }));
    const message = await unauthorized(token);
    assert.match(message, REVOKED_BY_KEY);
    assert.match(message, /the tokens of user "bob" were invalidated/);
  });

  it('fails after a tokenGeneration bump even when the key was made under the new generation', async () => {
    users.set('bob', user('bob', { tokenGeneration: 2 }));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob' }));
    keys.get('k-bob')!.metadata.annotations = { [ANNOTATION]: '2' };
    const token = await tokenOfKey('k-bob', 'bob', { tokenGeneration: 1 });
    assert.match(await unauthorized(token), /revoked .*tokens of user "bob" were invalidated/);
  });

  it('fails while the user is disabled and when the user is gone', async () => {
    users.set('carol', user('carol', { disabled: true }));
    keys.set('k-carol', accessKey('k-carol', 'u1', { user: 'carol' }));
    const token = await tokenOfKey('k-carol', 'carol', { tokenGeneration: 0 });
    assert.match(await unauthorized(token), /user "carol" is disabled/);
    users.set('carol', user('carol', { disabled: false }));
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'carol');
    users.delete('carol');
    assert.match(await unauthorized(token), /user "carol" of the access key "k-carol" does not exist/);
  });

  it('says the same, in one sentence, whether the user its key was made for is deleted or created again', async () => {
    users.set('carol', { ...user('carol'), metadata: { name: 'carol', uid: 'uid-carol' } });
    keys.set('k-carol', accessKey('k-carol', 'u1', { user: 'carol' }));
    keys.get('k-carol')!.metadata.ownerReferences = [
      { apiVersion: `${AUDIENCE}/v1`, kind: 'User', name: 'carol', uid: 'uid-carol' },
    ];
    const token = await tokenOfKey('k-carol', 'carol');
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'carol');
    const gone =
      'this direct cluster endpoint token no longer works because the user "carol" the access key "k-carol" was made for no longer exists; use another key (a user created again with that name does not inherit it)';
    users.delete('carol');
    assert.equal(await unauthorized(token), gone);
    users.set('carol', { ...user('carol'), metadata: { name: 'carol', uid: 'uid-carol-again' } });
    assert.equal(await unauthorized(token), gone);
  });

  it('accepts a token of a team key while the team exists, and refuses it once the team is deleted', async () => {
    teams.set('dev', { apiVersion: `${AUDIENCE}/v1`, kind: 'Team', metadata: { name: 'dev' }, spec: {} });
    keys.set('k-dev', accessKey('k-dev', 'u1', { team: 'dev' }));
    const token = await tokenOfKey('k-dev', 'team:dev', { groups: ['team:dev'] });
    assert.deepEqual(await authenticator.authenticate(request(token)), {
      name: 'team:dev',
      groups: ['team:dev', 'system:authenticated'],
      tokenDerived: true,
    });
    teams.delete('dev');
    assert.match(await unauthorized(token), /the team "dev" of the access key "k-dev" does not exist/);
  });

  it('refuses a token whose key now speaks for someone else', async () => {
    users.set('bob', user('bob'));
    users.set('eve', user('eve'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'eve' }));
    const token = await tokenOfKey('k-bob', 'bob');
    assert.match(await unauthorized(token), /no longer belongs to "bob"/);
  });

  it('answers 503, not 401, while the identity cache has not loaded', async () => {
    users.set('bob', user('bob'));
    keys.set('k-bob', accessKey('k-bob', 'u1', { user: 'bob' }));
    const token = await tokenOfKey('k-bob', 'bob');
    cache.hasSynced = false;
    assert.equal((await failure(token)).code, 503);
  });

  it('refuses a forged token that claims to be ours', async () => {
    users.set('admin', user('admin'));
    keys.set('k-admin', accessKey('k-admin', 'u1', { user: 'admin' }));
    const { token } = await issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    const kid = jwt.decode(token, { complete: true })?.header.kid;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const t = Math.floor(time.getTime() / 1000);
    const forged = jwt.sign(
      {
        iss: ISSUER,
        aud: AUDIENCE,
        sub: 'admin',
        iat: t,
        exp: t + 60,
        jti: 'x',
        tokenGeneration: 0,
        accessKey: { name: 'k-admin', uid: 'u1' },
      },
      privateKey,
      { algorithm: 'RS256', ...(kid ? { keyid: kid } : {}) },
    );
    assert.match(await unauthorized(forged), /token is invalid/);
  });

  it('leaves access keys and other issuers’ tokens to the next authenticator', async () => {
    assert.equal(await authenticator.authenticate(request('a'.repeat(64))), null);
    assert.equal(await authenticator.authenticate({ headers: {} } as IncomingMessage), null);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const hostToken = jwt.sign(
      { iss: 'https://kubernetes.default.svc', sub: 'system:serviceaccount:a:b' },
      privateKey,
      {
        algorithm: 'RS256',
      },
    );
    assert.equal(await authenticator.authenticate(request(hostToken)), null);
  });
});
