import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import jwt from 'jsonwebtoken';

import { IssuerDocuments, JWKS_PATH, OPENID_CONFIGURATION_PATH } from './discovery.js';
import { SigningKeyManager } from './key-manager.js';
import { FileKeyStore, KEY_SET_FILE, MemoryKeyStore, type SigningKeyStore } from './key-store.js';
import type { JsonWebKeySet } from './key-manager.js';
import type { SigningAlgorithm } from './signing-key.js';
import { TokenIssuer, TokenVerificationError, type TokenProblem } from './token-issuer.js';

const ISSUER = 'https://platform.example.com/kubernetes/management';
const AUDIENCE = 'management.platform.dev';
const HOUR = 3600_000;

class Clock {
  constructor(public time = new Date('2026-07-01T12:00:00Z')) {}
  readonly now = (): Date => this.time;
  advance(ms: number): void {
    this.time = new Date(this.time.getTime() + ms);
  }
  get seconds(): number {
    return Math.floor(this.time.getTime() / 1000);
  }
}

interface Setup {
  clock: Clock;
  keys: SigningKeyManager;
  issuer: TokenIssuer;
  store: SigningKeyStore;
}

async function setup(
  options: {
    alg?: SigningAlgorithm;
    store?: SigningKeyStore;
    clock?: Clock;
    graceMs?: number;
    rotationMs?: number;
  } = {},
): Promise<Setup> {
  const clock = options.clock ?? new Clock();
  const store = options.store ?? new MemoryKeyStore();
  const keys = new SigningKeyManager({
    store,
    algorithm: options.alg ?? 'RS256',
    rotationPeriodMs: options.rotationMs ?? 0,
    gracePeriodMs: options.graceMs ?? 2 * HOUR,
    now: clock.now,
  });
  await keys.init();
  const issuer = new TokenIssuer(keys, { issuer: ISSUER, audience: AUDIENCE, now: clock.now });
  return { clock, keys, issuer, store };
}

/** What a connected cluster does: pick the JWK by kid and verify with a standard library. */
function verifyWithJwks(token: string, jwks: JsonWebKeySet, clockSeconds: number): jwt.JwtPayload {
  const decoded = jwt.decode(token, { complete: true });
  assert.ok(decoded);
  const jwk = jwks.keys.find((k) => k.kid === decoded.header.kid);
  if (!jwk) throw new Error(`no key ${decoded.header.kid ?? ''} in the JWKS`);
  const key = createPublicKey({ key: { ...jwk } as JsonWebKey, format: 'jwk' });
  const payload = jwt.verify(token, key, {
    algorithms: [jwk.alg],
    issuer: ISSUER,
    audience: AUDIENCE,
    clockTimestamp: clockSeconds,
  });
  assert.ok(typeof payload === 'object');
  return payload;
}

async function rejection(p: Promise<unknown>): Promise<TokenProblem> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TokenVerificationError, String(err));
    return err.problem;
  }
  assert.fail('expected the token to be rejected');
}

for (const alg of ['RS256', 'ES256'] as const) {
  describe(`direct cluster endpoint tokens (${alg})`, () => {
    it('carry every claim and verify against the published JWKS with a standard library', async () => {
      const { issuer, keys, clock } = await setup({ alg });
      const scope = { clusters: [{ cluster: 'prod' }] };
      const { token, claims } = await issuer.issue({
        subject: 'alice',
        groups: ['dev'],
        ttlSeconds: 600,
        scope,
        tokenGeneration: 3,
        accessKey: { name: 'alice-ci', uid: 'a1b2', digest: 'd1' },
      });

      const header = jwt.decode(token, { complete: true })?.header;
      assert.equal(header?.alg, alg);
      assert.equal(header?.typ, 'JWT');
      assert.equal(header?.kid, (await keys.signingKey()).kid);

      const payload = verifyWithJwks(token, await keys.jwks(), clock.seconds);
      assert.equal(payload.iss, ISSUER);
      assert.equal(payload.sub, 'alice');
      assert.equal(payload.aud, AUDIENCE);
      assert.equal(payload.iat, clock.seconds);
      assert.equal(payload.exp, clock.seconds + 600);
      assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
      assert.deepEqual(payload['scope'], scope);
      assert.equal(payload['tokenGeneration'], 3);
      assert.deepEqual(payload['groups'], ['dev']);
      assert.deepEqual(payload['accessKey'], { name: 'alice-ci', uid: 'a1b2', digest: 'd1' });
      assert.deepEqual(await issuer.verify(token), claims);
    });

    it('fail after expiry, in the platform and in a standard library', async () => {
      const { issuer, keys, clock } = await setup({ alg });
      const { token } = await issuer.issue({ subject: 'alice', ttlSeconds: 60 });
      clock.advance(59_000);
      await issuer.verify(token);
      const jwks = await keys.jwks();
      verifyWithJwks(token, jwks, clock.seconds);
      clock.advance(1_000);
      assert.equal(await rejection(issuer.verify(token)), 'expired');
      // The key is still published: expiry alone fails the token.
      assert.throws(() => verifyWithJwks(token, jwks, clock.seconds), jwt.TokenExpiredError);
    });
  });
}

describe('verification', () => {
  it('gives every token its own id', async () => {
    const { issuer } = await setup();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await issuer.issue({ subject: 'a', ttlSeconds: 10 })).claims.jti);
    assert.equal(ids.size, 5);
  });

  it('refuses a token signed with a foreign key, even one that claims our key id and issuer', async () => {
    const { issuer, keys, clock } = await setup();
    const kid = (await keys.signingKey()).kid;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = jwt.sign(
      { iss: ISSUER, sub: 'admin', aud: AUDIENCE, iat: clock.seconds, exp: clock.seconds + 60, jti: 'x' },
      privateKey,
      { algorithm: 'RS256', keyid: kid },
    );
    assert.equal(await rejection(issuer.verify(forged)), 'invalid');
    assert.throws(() => verifyWithJwks(forged, { keys: [] }, clock.seconds), /no key/);
    const jwks = await keys.jwks();
    assert.throws(() => verifyWithJwks(forged, jwks, clock.seconds), /invalid signature/);
  });

  it('refuses a token of ours whose accessKey claim is not a name, a uid and a digest', async () => {
    const { issuer, keys, clock } = await setup();
    const key = await keys.signingKey();
    for (const accessKey of [
      'alice-ci',
      { name: 'alice-ci' },
      { name: 'alice-ci', uid: 'x' },
      { name: '', uid: 'x', digest: 'd' },
      [1],
    ]) {
      const token = jwt.sign(
        {
          iss: ISSUER,
          sub: 'alice',
          aud: AUDIENCE,
          iat: clock.seconds,
          exp: clock.seconds + 60,
          jti: 'x',
          accessKey,
        },
        key.privateKey,
        { algorithm: key.alg, keyid: key.kid },
      );
      assert.equal(await rejection(issuer.verify(token)), 'invalid', JSON.stringify(accessKey));
    }
  });

  it('refuses a token of another installation (own keys, own issuer)', async () => {
    const ours = await setup();
    const theirs = await setup({ clock: ours.clock });
    const { token } = await theirs.issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    // Same issuer name, other key: the key id is unknown here.
    assert.equal(await rejection(ours.issuer.verify(token)), 'unknown-key');
    const other = new TokenIssuer(theirs.keys, {
      issuer: 'https://elsewhere',
      audience: AUDIENCE,
      now: ours.clock.now,
    });
    const { token: foreign } = await other.issue({ subject: 'alice', ttlSeconds: 60 });
    assert.equal(await rejection(ours.issuer.verify(foreign)), 'foreign');
  });

  it('refuses a token for another audience and an unsigned token', async () => {
    const { keys, issuer, clock } = await setup();
    const elsewhere = new TokenIssuer(keys, { issuer: ISSUER, audience: 'other', now: clock.now });
    const { token } = await elsewhere.issue({ subject: 'alice', ttlSeconds: 60 });
    assert.equal(await rejection(issuer.verify(token)), 'invalid');
    const unsigned = jwt.sign({ iss: ISSUER, sub: 'admin', aud: AUDIENCE, exp: clock.seconds + 60 }, '', {
      algorithm: 'none',
    });
    assert.equal(await rejection(issuer.verify(`${unsigned}x`)), 'unknown-key');
    assert.equal(await rejection(issuer.verify('not-a-token')), 'malformed');
  });
});

describe('signing key rotation', () => {
  it('keeps old tokens valid for the grace period only', async () => {
    const { issuer, keys, clock } = await setup({ graceMs: 2 * HOUR });
    const old = await issuer.issue({ subject: 'alice', ttlSeconds: 24 * 3600 });
    const oldKid = (await keys.signingKey()).kid;

    clock.advance(HOUR);
    const newKey = await keys.rotate();
    assert.notEqual(newKey.kid, oldKid);
    const fresh = await issuer.issue({ subject: 'alice', ttlSeconds: 24 * 3600 });
    assert.equal(jwt.decode(fresh.token, { complete: true })?.header.kid, newKey.kid);

    // Both keys verify during the grace period, here and for a connected cluster.
    await issuer.verify(old.token);
    await issuer.verify(fresh.token);
    const during = await keys.jwks();
    assert.deepEqual(during.keys.map((k) => k.kid).sort(), [oldKid, newKey.kid].sort());
    verifyWithJwks(old.token, during, clock.seconds);

    clock.advance(2 * HOUR - 1000);
    await issuer.verify(old.token);
    clock.advance(1000);
    assert.equal(await rejection(issuer.verify(old.token)), 'unknown-key');
    const afterGrace = await keys.jwks();
    assert.deepEqual(
      afterGrace.keys.map((k) => k.kid),
      [newKey.kid],
    );
    assert.throws(() => verifyWithJwks(old.token, afterGrace, clock.seconds), /no key/);
    await issuer.verify(fresh.token);
  });

  it('rotates on its own once the current key is older than the rotation period', async () => {
    const { issuer, keys, clock } = await setup({ rotationMs: 24 * HOUR, graceMs: HOUR });
    const first = (await keys.signingKey()).kid;
    clock.advance(24 * HOUR - 1);
    const old = await issuer.issue({ subject: 'alice', ttlSeconds: 600 });
    assert.equal(jwt.decode(old.token, { complete: true })?.header.kid, first);
    clock.advance(1);
    const second = (await keys.signingKey()).kid;
    assert.notEqual(second, first);
    await issuer.verify(old.token);
  });

  it('reaches other replicas: a token signed after a rotation elsewhere verifies here', async () => {
    const store = new MemoryKeyStore();
    const clock = new Clock();
    const a = await setup({ store, clock });
    const b = await setup({ store, clock });
    assert.equal((await a.keys.signingKey()).kid, (await b.keys.signingKey()).kid);
    await a.keys.rotate();
    const { token } = await a.issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    // b has not re-read the store yet; the unknown key id makes it do so.
    await b.issuer.verify(token);
    assert.equal((await b.keys.signingKey()).kid, (await a.keys.signingKey()).kid);
  });
});

describe('keeping the signing keys', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('generates a key once and finds it again after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
    dirs.push(dir);
    const tokensDir = join(dir, 'tokens');
    const first = await setup({ store: new FileKeyStore(tokensDir) });
    const { token } = await first.issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    assert.equal(statSync(join(tokensDir, KEY_SET_FILE)).mode & 0o777, 0o600);
    assert.equal(statSync(tokensDir).mode & 0o777, 0o700);

    const restarted = await setup({ store: new FileKeyStore(tokensDir), clock: first.clock });
    assert.equal((await restarted.keys.signingKey()).kid, (await first.keys.signingKey()).kid);
    await restarted.issuer.verify(token);
  });

  it('uses the key another replica generated first', async () => {
    const store = new MemoryKeyStore();
    const clock = new Clock();
    const [a, b] = await Promise.all([setup({ store, clock }), setup({ store, clock })]);
    assert.equal((await a.keys.signingKey()).kid, (await b.keys.signingKey()).kid);
  });
});

describe('issuer discovery documents', () => {
  it('announce the issuer and keys under it, the same at whichever address or prefix they were fetched', async () => {
    const { keys } = await setup();
    const docs = new IssuerDocuments(keys, { issuer: ISSUER });
    const config = await docs.document(OPENID_CONFIGURATION_PATH, 'https://h:8443/kubernetes/management');
    assert.deepEqual(config?.body, {
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    const root = await docs.document(OPENID_CONFIGURATION_PATH, 'https://127.0.0.1:8443');
    assert.deepEqual(root?.body, config?.body);
    const set = await docs.document(JWKS_PATH, 'https://h:8443');
    assert.equal(set?.contentType, 'application/jwk-set+json');
    assert.deepEqual(set?.body, await keys.jwks());
    assert.equal(await docs.document('/openid/v1/other', 'https://h'), undefined);

    const pinned = new IssuerDocuments(keys, { issuer: ISSUER, jwksUri: 'https://keys.example/jwks' });
    const doc = await pinned.document(OPENID_CONFIGURATION_PATH, 'https://h:8443');
    assert.equal((doc?.body as { jwks_uri: string }).jwks_uri, 'https://keys.example/jwks');
  });

  it('name the issuer the token issuer signs with, also when it is resolved late', async () => {
    const { keys } = await setup();
    let name = 'https://first.example/p';
    const issuer = new TokenIssuer(keys, { issuer: () => name, audience: AUDIENCE });
    const docs = new IssuerDocuments(keys, { issuer: () => name });
    name = 'https://platform.example:8443/kubernetes/management';
    const { claims, token } = await issuer.issue({ subject: 'alice', ttlSeconds: 60 });
    const body = (await docs.document(OPENID_CONFIGURATION_PATH, 'https://x'))?.body as {
      issuer: string;
      jwks_uri: string;
    };
    assert.equal(claims.iss, name);
    assert.equal(body.issuer, claims.iss);
    assert.equal(body.jwks_uri, `${claims.iss}/openid/v1/jwks`);
    assert.equal((await issuer.verify(token)).iss, name);
  });

  it('publish public keys only', async () => {
    const { keys } = await setup();
    for (const k of (await keys.jwks()).keys) {
      for (const privateMember of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.ok(!(privateMember in k));
      assert.equal(k.use, 'sig');
    }
  });
});
