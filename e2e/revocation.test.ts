// Revocation is total (issue 10): against a started server, on the embedded backend
// and on etcd, each way of revoking an access key ends the key, every direct cluster
// endpoint token minted with it, and could never have let that token mint a key of
// its own (refused at creation, 403). What is checked is what a user sees: the
// status code and the Status message.
//
//   revoked by:  delete key | rotate its value | disable key | key ttl ran out | user's
//                tokenGeneration bumped | user disabled | user deleted | (team key) team deleted
//   credential:  the key itself | a token minted by it | a key minted by that token
//
// Revocations reach the authenticators through the identity cache's watches, so the
// 401s are polled for with a bounded helper; nothing sleeps.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { createAccessKey } from './access-keys.js';
import { eventually } from './eventually.js';
import { apiRequest, type ApiResponse, type RequestBody } from './https-client.js';
import { backends, GROUP, GROUP_VERSION, startServer, type TestServer } from './harness.js';

const TEST = { timeout: 180_000 };
const V1 = `/apis/${GROUP}/v1`;
const KEY_REVOKED = 'this direct cluster endpoint token no longer works because ';
const CANNOT_MINT =
  'a direct cluster endpoint token cannot mint credentials (access keys, tokens, kube configs); use an access key';
/** A key lives this long in the expiry cell: long enough to mint a token on a busy machine. */
const SHORT_TTL_SECONDS = 4;

interface Status {
  readonly code?: number;
  readonly message?: string;
}

/** Long enough for watch propagation on a busy machine, and for a short ttl to run out. */
const PROPAGATION_MS = 20_000;

function messageOf(r: ApiResponse): string {
  return r.json<Status>().message ?? '';
}

/** One revocation: what it does, and what the key and its token are then told. */
interface Revocation {
  readonly name: string;
  /** The key's spec besides its owner. */
  readonly keySpec?: Record<string, unknown>;
  revoke(server: TestServer, owner: string, key: string): Promise<void>;
  /** What the key itself is told afterwards. */
  readonly keyMessage: (owner: string, key: string) => string | RegExp;
  /** What a token it minted is told afterwards. */
  readonly tokenMessage: (owner: string, key: string) => string | RegExp;
}

function expectOk(r: ApiResponse, status: number): void {
  assert.equal(r.status, status, r.text);
}

async function adminPatch(server: TestServer, path: string, patch: Record<string, unknown>): Promise<void> {
  expectOk(await server.api('PATCH', path, patch, { 'Content-Type': 'application/merge-patch+json' }), 200);
}

const keyRevokedAs = (reason: string): string => `${KEY_REVOKED}${reason}`;

/** What a key whose user (by uid) is gone says, whether or not a user of the name was created again. */
const userGone = (owner: string, key: string): string =>
  `the user "${owner}" the access key "${key}" was made for no longer exists; use another key (a user created again with that name does not inherit it)`;

const REVOCATIONS: readonly Revocation[] = [
  {
    name: 'the key is deleted',
    revoke: async (server, _owner, key) =>
      expectOk(await server.api('DELETE', `${V1}/ownedaccesskeys/${key}`), 200),
    keyMessage: () => 'Unauthorized',
    tokenMessage: (_owner, key) =>
      `the access key "${key}" this direct cluster endpoint token was minted with no longer exists; request a new token with a working key`,
  },
  {
    name: 'the key’s value is rotated',
    revoke: (server, _owner, key) =>
      adminPatch(server, `${V1}/ownedaccesskeys/${key}`, { spec: { key: 'r'.repeat(64) } }),
    keyMessage: () => 'Unauthorized',
    tokenMessage: (_owner, key) =>
      `the access key "${key}" was rotated since this direct cluster endpoint token was minted; request a new token with its new value`,
  },
  {
    name: 'the key is disabled',
    revoke: (server, _owner, key) =>
      adminPatch(server, `${V1}/ownedaccesskeys/${key}`, { spec: { disabled: true } }),
    keyMessage: (_owner, key) =>
      `the access key "${key}" is disabled; ask an administrator to enable it or use another key`,
    tokenMessage: (_owner, key) =>
      keyRevokedAs(
        `the access key "${key}" is disabled; ask an administrator to enable it or use another key`,
      ),
  },
  {
    name: 'the key’s ttl runs out',
    keySpec: { ttl: SHORT_TTL_SECONDS },
    // Nothing to do: time revokes it.
    revoke: () => Promise.resolve(),
    keyMessage: () => 'access key expired, please log in again',
    tokenMessage: (_owner, key) => keyRevokedAs(`the access key "${key}" expired; please log in again`),
  },
  {
    name: 'the user’s tokenGeneration is bumped',
    revoke: (server, owner) => adminPatch(server, `${V1}/users/${owner}`, { spec: { tokenGeneration: 1 } }),
    keyMessage: (owner, key) =>
      `the access key "${key}" was revoked: the tokens of user "${owner}" were invalidated; please log in again`,
    tokenMessage: (owner, key) =>
      keyRevokedAs(
        `the access key "${key}" was revoked: the tokens of user "${owner}" were invalidated; please log in again`,
      ),
  },
  {
    name: 'the user is disabled',
    revoke: (server, owner) => adminPatch(server, `${V1}/users/${owner}`, { spec: { disabled: true } }),
    keyMessage: (owner) => `the user "${owner}" is disabled; ask an administrator to enable the user`,
    tokenMessage: (owner) =>
      keyRevokedAs(`the user "${owner}" is disabled; ask an administrator to enable the user`),
  },
  {
    name: 'the user is deleted',
    revoke: async (server, owner) => expectOk(await server.api('DELETE', `${V1}/users/${owner}`), 200),
    // A collector of a deleted user's keys (issue 12) may delete the key too: then
    // it is unknown, and the token's key no longer exists. Either way, refused.
    keyMessage: (owner, key) => new RegExp(`^(${escape(userGone(owner, key))}|Unauthorized)$`),
    tokenMessage: (owner, key) =>
      new RegExp(
        `^(${escape(keyRevokedAs(userGone(owner, key)))}|the access key "${key}" this direct cluster endpoint token was minted with no longer exists; .*)$`,
      ),
  },
];

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

for (const backend of backends()) {
  describe(`revocation is total (${backend})`, TEST, () => {
    let server: TestServer;

    before(async () => {
      server = await startServer({ backend });
    });

    after(async () => {
      await server?.stop();
    });

    /** A request with `credential` as bearer token (an access key or a token). */
    const as = (credential: string, method: string, path: string, body?: RequestBody): Promise<ApiResponse> =>
      apiRequest({ baseUrl: server.apiBase, ca: server.ca, token: credential }, method, path, body);

    const createKey = (name: string, spec: Record<string, unknown>): Promise<string> =>
      createAccessKey(server, name, spec);

    async function mintToken(key: string): Promise<string> {
      const r = await as(key, 'POST', `${V1}/directclusterendpointtokens`, {
        apiVersion: GROUP_VERSION,
        kind: 'DirectClusterEndpointToken',
        spec: { ttl: 3600 },
      });
      assert.equal(r.status, 201, r.text);
      const token = r.json<{ status: { token: string } }>().status.token;
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      return token;
    }

    /** The token may not mint a key (nor another token): 403 with upstream's wording and the reason. */
    async function expectCannotMint(
      token: string,
      user: string,
      owner: Record<string, string>,
    ): Promise<void> {
      const key = await as(token, 'POST', `${V1}/ownedaccesskeys`, {
        apiVersion: GROUP_VERSION,
        kind: 'OwnedAccessKey',
        metadata: { generateName: 'from-token-' },
        spec: owner,
      });
      assert.equal(key.status, 403, key.text);
      assert.equal(
        messageOf(key),
        `ownedaccesskeys.${GROUP} is forbidden: User "${user}" cannot create resource "ownedaccesskeys" in API group "${GROUP}" at the cluster scope: ${CANNOT_MINT}`,
      );
      const another = await as(token, 'POST', `${V1}/directclusterendpointtokens`, { spec: { ttl: 60 } });
      assert.equal(another.status, 403, another.text);
      assert.ok(messageOf(another).endsWith(`: ${CANNOT_MINT}`), another.text);
    }

    async function expectRefused(credential: string, path: string, message: string | RegExp): Promise<void> {
      await eventually(async () => {
        const r = await as(credential, 'GET', path);
        assert.equal(r.status, 401, r.text);
        if (typeof message === 'string') assert.equal(messageOf(r), message);
        else assert.match(messageOf(r), message);
      }, PROPAGATION_MS);
    }

    for (const [i, revocation] of REVOCATIONS.entries()) {
      it(`${revocation.name}: the key, its token, and a key that token would mint`, TEST, async () => {
        const owner = `rev-${i}`;
        const keyName = `rev-${i}-key`;
        expectOk(
          await server.api('POST', `${V1}/users`, {
            apiVersion: GROUP_VERSION,
            kind: 'User',
            metadata: { name: owner },
            spec: {},
          }),
          201,
        );
        const key = await createKey(keyName, { user: owner, type: 'User', ...(revocation.keySpec ?? {}) });
        const self = `${V1}/users/${owner}`;
        await eventually(async () => expectOk(await as(key, 'GET', self), 200), PROPAGATION_MS);
        const token = await mintToken(key);
        // The token works while the key does, as the key's owner, and mints nothing.
        expectOk(await as(token, 'GET', self), 200);
        await expectCannotMint(token, owner, { user: owner });

        await revocation.revoke(server, owner, keyName);

        await expectRefused(key, self, revocation.keyMessage(owner, keyName));
        await expectRefused(token, self, revocation.tokenMessage(owner, keyName));
        // And so nothing it asks for is answered past authentication, a new key least of all.
        const late = await as(token, 'POST', `${V1}/ownedaccesskeys`, { spec: { user: owner } });
        assert.equal(late.status, 401, late.text);
      });
    }

    it('a team key: its tokens end when the team is deleted', TEST, async () => {
      expectOk(
        await server.api('POST', `${V1}/teams`, {
          apiVersion: GROUP_VERSION,
          kind: 'Team',
          metadata: { name: 'rev-team' },
          spec: {},
        }),
        201,
      );
      const key = await createKey('rev-team-key', { team: 'rev-team' });
      const selves = `${V1}/selves`;
      const self = { apiVersion: GROUP_VERSION, kind: 'Self' };
      await eventually(async () => expectOk(await as(key, 'POST', selves, self), 201), PROPAGATION_MS);
      const token = await mintToken(key);
      expectOk(await as(token, 'POST', selves, self), 201);
      await expectCannotMint(token, 'team:rev-team', { team: 'rev-team' });

      expectOk(await server.api('DELETE', `${V1}/teams/rev-team`), 200);

      // The garbage collector deletes a deleted team's keys too (issue 12): then the key
      // is unknown and the token's key no longer exists. Either way, refused.
      const gone =
        'the team "rev-team" the access key "rev-team-key" was made for no longer exists; use another key (a team created again with that name does not inherit it)';
      await expectRefused(key, `${V1}/users`, new RegExp(`^(${escape(gone)}|Unauthorized)$`));
      await expectRefused(
        token,
        `${V1}/users`,
        new RegExp(
          `^(${escape(keyRevokedAs(gone))}|the access key "rev-team-key" this direct cluster endpoint token was minted with no longer exists; .*)$`,
        ),
      );
    });

    it('an administrator’s token administers, and mints nothing either', TEST, async () => {
      const token = await mintToken(server.token);
      expectOk(await as(token, 'GET', `${V1}/users/admin`), 200);
      const r = await as(token, 'POST', `${V1}/ownedaccesskeys`, { spec: { user: 'admin' } });
      assert.equal(r.status, 403, r.text);
      assert.ok(messageOf(r).endsWith(`: ${CANNOT_MINT}`), r.text);
    });
  });
}
