import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { before, describe, it } from 'node:test';
import jwt from 'jsonwebtoken';

import { isApiError } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { SigningKeyManager } from '../tokens/key-manager.js';
import { MemoryKeyStore } from '../tokens/key-store.js';
import { TokenIssuer } from '../tokens/token-issuer.js';
import { EndpointTokenAuthenticator, TOKEN_EXPIRED_MESSAGE } from './endpoint-token.js';

const ISSUER = 'https://platform.example.com';
const AUDIENCE = 'management.platform.dev';

let time = new Date('2026-07-01T00:00:00Z');
const now = (): Date => time;

function user(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: `${AUDIENCE}/v1`, kind: 'User', metadata: { name }, spec };
}

const users = new Map<string, KubeObject>();
let issuer: TokenIssuer;
let authenticator: EndpointTokenAuthenticator;

function request(token: string): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
}

async function unauthorized(token: string): Promise<string> {
  try {
    await authenticator.authenticate(request(token));
  } catch (err) {
    assert.ok(isApiError(err));
    assert.equal(err.code, 401);
    return err.message;
  }
  assert.fail('expected a 401');
}

before(async () => {
  const keys = new SigningKeyManager({
    store: new MemoryKeyStore(),
    rotationPeriodMs: 0,
    gracePeriodMs: 3600_000,
    now,
  });
  await keys.init();
  issuer = new TokenIssuer(keys, { issuer: ISSUER, audience: AUDIENCE, now });
  authenticator = new EndpointTokenAuthenticator(issuer, { user: (name) => users.get(name) });
});

describe('EndpointTokenAuthenticator', () => {
  it('authenticates the user the token was issued to, with its groups and scope', async () => {
    users.set('alice', user('alice', { tokenGeneration: 2 }));
    const scope = { projects: [{ project: 'a' }] };
    const { token } = await issuer.issue({
      subject: 'alice',
      groups: ['dev'],
      ttlSeconds: 600,
      scope,
      tokenGeneration: 2,
    });
    assert.deepEqual(await authenticator.authenticate(request(token)), {
      name: 'alice',
      groups: ['dev', 'system:authenticated'],
      scope,
    });
  });

  it('fails once the token expired, saying so', async () => {
    users.set('alice', user('alice'));
    const { token } = await issuer.issue({ subject: 'alice', ttlSeconds: 60, tokenGeneration: 0 });
    time = new Date(time.getTime() + 60_000);
    assert.equal(await unauthorized(token), TOKEN_EXPIRED_MESSAGE);
  });

  it('fails after the user bumps tokenGeneration', async () => {
    users.set('bob', user('bob', { tokenGeneration: 1 }));
    const { token } = await issuer.issue({ subject: 'bob', ttlSeconds: 600, tokenGeneration: 1 });
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'bob');
    users.set('bob', user('bob', { tokenGeneration: 2 }));
    assert.match(await unauthorized(token), /revoked .*tokens of user "bob" were invalidated/);
  });

  it('fails while the user is disabled and when the user is gone', async () => {
    users.set('carol', user('carol', { disabled: true }));
    const { token } = await issuer.issue({ subject: 'carol', ttlSeconds: 600, tokenGeneration: 0 });
    assert.match(await unauthorized(token), /user "carol" is disabled/);
    users.set('carol', user('carol', { disabled: false }));
    assert.equal((await authenticator.authenticate(request(token)))?.name, 'carol');
    users.delete('carol');
    assert.match(await unauthorized(token), /user "carol" .* does not exist/);
  });

  it('accepts a token of a non-user subject (a team key) without a User', async () => {
    const { token } = await issuer.issue({ subject: 'team:dev', groups: ['team:dev'], ttlSeconds: 60 });
    assert.deepEqual(await authenticator.authenticate(request(token)), {
      name: 'team:dev',
      groups: ['team:dev', 'system:authenticated'],
    });
  });

  it('refuses a forged token that claims to be ours', async () => {
    users.set('admin', user('admin'));
    const { token } = await issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    const kid = jwt.decode(token, { complete: true })?.header.kid;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const t = Math.floor(time.getTime() / 1000);
    const forged = jwt.sign(
      { iss: ISSUER, aud: AUDIENCE, sub: 'admin', iat: t, exp: t + 60, jti: 'x', tokenGeneration: 0 },
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
