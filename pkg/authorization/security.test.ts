// The security table: one real server (options -> config -> HTTPS, SQLite), the
// fixtures of testing/security-fixtures.ts, and one row per request a caller might
// try: who (which key, in which state), what (verb, resource, object, scope), and
// what must come back (allow, 401, 403, 422, and for lists exactly what is seen).
// Rows run in order; the few that change something change only what later rows
// do not read.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeConfig } from '../kubeconfig/types.js';
import { ADMIN_KUBECONFIG_FILE } from '../server/bootstrap.js';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions } from '../apiserver/options/server-run-options.js';
import { buildServerConfig } from '../server/config.js';
import { startServer } from '../server/serve.js';
import { keyRevisionAnnotation } from '../apis/management/v1/owned-access-key.js';
import { accessKeyIdentity } from '../authentication/access-key.js';
import { TOKEN_NOT_FOR_MANAGEMENT_MESSAGE } from '../authentication/endpoint-token.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import { issueCallerToken } from '../registry/management/directclusterendpointtoken/caller-token.js';
import { SigningKeyManager } from '../tokens/key-manager.js';
import { FileKeyStore } from '../tokens/key-store.js';
import { TokenIssuer } from '../tokens/token-issuer.js';
import { IMPERSONATION_CANNOT_MINT_REASON, TOKEN_CANNOT_MINT_REASON } from './credential-minting.js';
import { SCOPED_CANNOT_IMPERSONATE_REASON } from './impersonation.js';
import { ADMIN_ROLE, GROUP, KEY_PREFIX, plainKey, seedFixtures } from './testing/security-fixtures.js';

const API = `/apis/${GROUP}/v1`;
const TOKEN_ISSUER = 'https://platform.security-table.test';
const EXPIRED = 'access key expired, please log in again';
const KEY_REVOKED = 'this direct cluster endpoint token no longer works because ';

type Expect = 200 | 201 | 400 | 401 | 403 | 404 | 422;

interface Row {
  readonly name: string;
  /**
   * The fixture key used (`admin`: the bootstrap admin's key; null: no credentials), or a
   * direct cluster endpoint token (`token:<key>`, `token-without-key:<user>`, `token-wrong-uid:<key>`, `token-old-value:<key>`).
   */
  readonly as: string | null;
  readonly method?: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  readonly expect: Expect;
  /** The Status message, exactly (string) or matching (RegExp). */
  readonly message?: string | RegExp;
  /** For lists: the names of the items, exactly. */
  readonly names?: readonly string[];
  readonly check?: (body: Record<string, unknown>) => void;
}

const forbidden = (
  user: string,
  verb: string,
  resource: string,
  name: string,
  where = 'at the cluster scope',
): string =>
  `${resource}.${GROUP}${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${GROUP}" ${where}`;

const merge = 'application/merge-patch+json';
const keyBody = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): unknown => ({
  metadata: { generateName: 't-', ...metadata },
  spec,
});
const blockingRef = (kind: string, name: string): Record<string, unknown> => ({
  apiVersion: `${GROUP}/v1`,
  kind,
  name,
  uid: randomUUID(),
  blockOwnerDeletion: true,
});

const ROWS: readonly Row[] = [
  // ---- authentication: key states ----------------------------------------------------
  { name: 'no credentials', as: null, path: `${API}/users`, expect: 401, message: 'Unauthorized' },
  {
    name: 'a key nobody issued',
    as: 'no-such-key',
    path: `${API}/users`,
    expect: 401,
    message: 'Unauthorized',
  },
  {
    name: 'disabled key',
    as: 'k-alice-disabled',
    path: `${API}/users/alice`,
    expect: 401,
    message:
      'the access key "k-alice-disabled" is disabled; ask an administrator to enable it or use another key',
  },
  {
    name: 'key of a disabled user',
    as: 'k-carol',
    path: `${API}/users/carol`,
    expect: 401,
    message: 'the user "carol" is disabled; ask an administrator to enable the user',
  },
  {
    name: 'expired by ttl',
    as: 'k-alice-expired',
    path: `${API}/users/alice`,
    expect: 401,
    message: EXPIRED,
  },
  {
    name: 'expired after last activity',
    as: 'k-alice-idle-expired',
    path: `${API}/users/alice`,
    expect: 401,
    message: EXPIRED,
  },
  {
    name: 'ttl after last activity, used recently',
    as: 'k-alice-idle-ok',
    path: `${API}/users/alice`,
    expect: 200,
  },
  {
    name: 'key made before the tokenGeneration was bumped',
    as: 'k-dave-old',
    path: `${API}/users/dave`,
    expect: 401,
    message:
      'the access key "k-dave-old" was revoked: the tokens of user "dave" were invalidated; please log in again',
  },
  {
    name: 'key made under the current tokenGeneration',
    as: 'k-dave-new',
    path: `${API}/users/dave`,
    expect: 200,
  },
  {
    name: 'key of a user that does not exist',
    as: 'k-ghost',
    path: `${API}/users/ghost`,
    expect: 401,
    message: /user "ghost" of the access key "k-ghost" does not exist/,
  },
  {
    name: 'forged front-proxy headers without a client certificate',
    as: null,
    headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' },
    path: `${API}/users`,
    expect: 401,
  },
  {
    name: 'forged front-proxy headers beside a key: the key decides',
    as: 'k-bob',
    headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' },
    path: `${API}/users/admin`,
    expect: 403,
    message: forbidden('bob', 'get', 'users', 'admin'),
  },
  {
    name: 'forged front-proxy headers beside a key: lists stay the key owner’s',
    as: 'k-bob',
    headers: { 'x-remote-user': 'admin', 'x-remote-group': 'platform:admins' },
    path: `${API}/users`,
    expect: 200,
    names: ['bob', 'hank', 'ivan', 'alice'],
  },

  // ---- direct cluster endpoint tokens: only as good as their key, and they mint nothing ----------
  // `token:<key>` is a token minted with that fixture key (as POST directclusterendpointtokens
  // mints one), `token-without-key:<user>` one minted by a caller that used no key (front-proxy,
  // x509, TokenReview; or minted before tokens named their key), `token-wrong-uid:<key>` one
  // naming an earlier key of that name, `token-old-value:<key>` one minted with an earlier
  // value of the key.
  { name: 'token of a usable key', as: 'token:k-bob', path: `${API}/users/bob`, expect: 200 },
  {
    name: 'token of a usable key: lists stay the key owner’s',
    as: 'token:k-bob',
    path: `${API}/users`,
    expect: 200,
    names: ['bob', 'hank', 'ivan', 'alice'],
  },
  {
    name: 'token of a usable key may ask who it is',
    as: 'token:k-bob',
    method: 'POST',
    path: `${API}/selves`,
    body: { apiVersion: `${GROUP}/v1`, kind: 'Self' },
    expect: 201,
  },
  {
    name: 'token minted without an access key',
    as: 'token-without-key:bob',
    path: `${API}/users/bob`,
    expect: 401,
    message: TOKEN_NOT_FOR_MANAGEMENT_MESSAGE,
  },
  {
    name: 'token of an earlier key of the same name',
    as: 'token-wrong-uid:k-bob',
    path: `${API}/users/bob`,
    expect: 401,
    message:
      'the access key "k-bob" this direct cluster endpoint token was minted with no longer exists; request a new token with a working key',
  },
  {
    name: 'token of an earlier value of a rotated key',
    as: 'token-old-value:k-bob',
    path: `${API}/users/bob`,
    expect: 401,
    message:
      'the access key "k-bob" was rotated since this direct cluster endpoint token was minted; request a new token with its new value',
  },
  {
    name: 'token of a disabled key',
    as: 'token:k-alice-disabled',
    path: `${API}/users/alice`,
    expect: 401,
    message: `${KEY_REVOKED}the access key "k-alice-disabled" is disabled; ask an administrator to enable it or use another key`,
  },
  {
    name: 'token of an expired key',
    as: 'token:k-alice-expired',
    path: `${API}/users/alice`,
    expect: 401,
    message: `${KEY_REVOKED}the access key "k-alice-expired" expired; please log in again`,
  },
  {
    name: 'token of a key expired after its last activity',
    as: 'token:k-alice-idle-expired',
    path: `${API}/users/alice`,
    expect: 401,
    message: `${KEY_REVOKED}the access key "k-alice-idle-expired" expired; please log in again`,
  },
  {
    name: 'token of a key of a disabled user',
    as: 'token:k-carol',
    path: `${API}/users/carol`,
    expect: 401,
    message: `${KEY_REVOKED}the user "carol" is disabled; ask an administrator to enable the user`,
  },
  {
    name: 'token of a key made before the tokenGeneration was bumped',
    as: 'token:k-dave-old',
    path: `${API}/users/dave`,
    expect: 401,
    message: `${KEY_REVOKED}the access key "k-dave-old" was revoked: the tokens of user "dave" were invalidated; please log in again`,
  },
  {
    name: 'token of a key made under the current tokenGeneration',
    as: 'token:k-dave-new',
    path: `${API}/users/dave`,
    expect: 200,
  },
  {
    name: 'token of a key of a user that does not exist',
    as: 'token:k-ghost',
    path: `${API}/users/ghost`,
    expect: 401,
    message:
      /^this direct cluster endpoint token no longer works .*user "ghost" of the access key "k-ghost" does not exist/,
  },
  { name: 'token of a team key', as: 'token:k-team-ops', path: `${API}/users/alice`, expect: 200 },
  {
    name: 'token of a scoped key keeps the scope',
    as: 'token:k-alice-proj',
    path: `${API}/users/alice`,
    expect: 403,
    message: /the scope of the token does not allow this request \(scope: projects \[p1\]\)$/,
  },
  {
    name: 'token may not create access keys',
    as: 'token:k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob' }),
    expect: 403,
    message: `${forbidden('bob', 'create', 'ownedaccesskeys', '')}: ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'token may not change access keys',
    as: 'token:k-bob',
    method: 'PATCH',
    path: `${API}/ownedaccesskeys/k-bob`,
    body: { spec: { ttl: 0 } },
    contentType: merge,
    expect: 403,
    message: `${forbidden('bob', 'patch', 'ownedaccesskeys', 'k-bob')}: ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'token may not delete access keys',
    as: 'token:k-bob',
    method: 'DELETE',
    path: `${API}/ownedaccesskeys/k-bob`,
    expect: 403,
    message: `${forbidden('bob', 'delete', 'ownedaccesskeys', 'k-bob')}: ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'token may not mint tokens',
    as: 'token:k-bob',
    method: 'POST',
    path: `${API}/directclusterendpointtokens`,
    body: { apiVersion: `${GROUP}/v1`, kind: 'DirectClusterEndpointToken', spec: { ttl: 60 } },
    expect: 403,
    message: `${forbidden('bob', 'create', 'directclusterendpointtokens', '')}: ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'token may not mint kube configs',
    as: 'token:k-bob',
    method: 'POST',
    path: `${API}/namespaces/p-p1/virtualclusterinstances/vc1/kubeconfig`,
    body: { spec: { clientCert: true } },
    expect: 403,
    message: `virtualclusterinstances.${GROUP} "vc1" is forbidden: User "bob" cannot create resource "virtualclusterinstances/kubeconfig" in API group "${GROUP}" in the namespace "p-p1": ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'an administrator’s token mints nothing either',
    as: 'token:k-erin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'erin' }),
    expect: 403,
    message: `${forbidden('erin', 'create', 'ownedaccesskeys', '')}: ${TOKEN_CANNOT_MINT_REASON}`,
  },
  {
    name: 'an administrator’s token administers',
    as: 'token:k-erin',
    path: `${API}/users/carol`,
    expect: 200,
  },
  {
    name: 'the key itself still mints',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/directclusterendpointtokens`,
    body: { apiVersion: `${GROUP}/v1`, kind: 'DirectClusterEndpointToken', spec: { ttl: 60 } },
    expect: 201,
  },

  // ---- administrators ---------------------------------------------------------------------
  {
    name: 'bootstrap admin lists every user',
    as: 'admin',
    path: `${API}/users`,
    expect: 200,
    names: ['admin', 'alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan'],
  },
  {
    name: 'admin cluster role on the User',
    as: 'k-erin',
    method: 'POST',
    path: `${API}/teams`,
    body: { metadata: { name: 'erins' } },
    expect: 201,
  },
  { name: 'member of a team holding the admin role', as: 'k-frank', path: `${API}/users/alice`, expect: 200 },
  {
    name: 'platform:admins group on the User',
    as: 'k-gina',
    path: `${API}/ownedaccesskeys/k-alice`,
    expect: 200,
  },
  {
    name: 'key of a team holding the admin role',
    as: 'k-team-ops',
    method: 'DELETE',
    path: `${API}/teams/erins`,
    expect: 200,
  },
  {
    name: 'plain user may not create teams',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/teams`,
    body: { metadata: { name: 'bobs' } },
    expect: 403,
    message: forbidden('bob', 'create', 'teams', ''),
  },
  {
    name: 'subject key is nobody special',
    as: 'k-robot',
    path: `${API}/users/alice`,
    expect: 403,
    message: forbidden('robot', 'get', 'users', 'alice'),
  },

  // ---- self -----------------------------------------------------------------------------------
  { name: 'own User', as: 'k-bob', path: `${API}/users/bob`, expect: 200 },
  {
    name: 'another User',
    as: 'k-bob',
    path: `${API}/users/admin`,
    expect: 403,
    message: forbidden('bob', 'get', 'users', 'admin'),
  },
  {
    name: 'own User is read-only',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/bob`,
    body: { spec: { displayName: 'B' } },
    contentType: merge,
    expect: 403,
    message: forbidden('bob', 'patch', 'users', 'bob'),
  },
  {
    name: 'own User may not be deleted',
    as: 'k-bob',
    method: 'DELETE',
    path: `${API}/users/bob`,
    expect: 403,
  },
  {
    name: 'own access keys, values empty',
    as: 'k-bob',
    path: `${API}/users/bob/accesskeys`,
    expect: 200,
    check: (body) => {
      const keys = body['accessKeys'] as {
        metadata: { name: string };
        spec: { key: string; user: string };
      }[];
      assert.deepEqual(
        keys.map((k) => k.metadata.name),
        ['k-bob'],
      );
      assert.equal(keys[0]?.spec.key, '');
    },
  },
  { name: 'team the user is named in', as: 'k-bob', path: `${API}/teams/qa`, expect: 200 },
  {
    name: 'team the user is not in',
    as: 'k-bob',
    path: `${API}/teams/ops`,
    expect: 403,
    message: forbidden('bob', 'get', 'teams', 'ops'),
  },
  {
    name: "team membership through the User's groups",
    as: 'k-alice',
    path: `${API}/teams/devs`,
    expect: 200,
  },
  {
    name: "team membership through the key's groups",
    as: 'k-hank-devs',
    path: `${API}/teams/devs`,
    expect: 200,
  },
  { name: 'the same user without that key group', as: 'k-hank', path: `${API}/teams/devs`, expect: 403 },
  {
    name: 'team list: own teams and teams shared by rules',
    as: 'k-bob',
    path: `${API}/teams`,
    expect: 200,
    names: ['devs', 'qa'],
  },
  { name: 'team list through groups', as: 'k-alice', path: `${API}/teams`, expect: 200, names: ['devs'] },
  {
    name: 'team accesskeys for a member',
    as: 'k-alice',
    path: `${API}/teams/devs/accesskeys`,
    expect: 200,
    check: (body) =>
      assert.deepEqual(
        (body['accessKeys'] as { metadata: { name: string } }[]).map((k) => k.metadata.name),
        ['k-team-devs'],
      ),
  },
  {
    name: 'create own key',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob' }),
    expect: 201,
  },
  {
    name: "create another user's key",
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'alice' }, { name: 'bob-for-alice' }),
    expect: 403,
    message: `ownedaccesskeys.${GROUP} "bob-for-alice" is forbidden: User "bob" cannot create access keys of user "alice": only their own`,
  },
  {
    name: 'create a key for an own team',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ team: 'qa' }),
    expect: 201,
  },
  {
    name: 'create a key for a team the user is not in',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ team: 'ops' }),
    expect: 403,
    message: /cannot create access keys of team "ops"/,
  },
  {
    name: 'create a key for a subject',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'bob' }),
    expect: 403,
    message: /only administrators may/,
  },
  {
    name: 'give an own key the administrators group',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['platform:admins'] }),
    expect: 403,
    message: /cannot give an access key the group "platform:admins"/,
  },
  {
    name: "give an own key a group of another team's members",
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['sso-devs'] }),
    expect: 403,
  },
  {
    name: 'give an own key a group the user has',
    as: 'k-alice',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'alice', groups: ['sso-devs'] }),
    expect: 201,
  },
  {
    name: 'reserved group on a key, even for an admin',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['system:masters'] }),
    expect: 422,
  },
  // ---- reserved identities: no key may claim system: (or team:) groups or owners ----------
  {
    name: 'a user gives an own key system:masters: 422, not merely 403',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['system:masters'] }),
    expect: 422,
    message:
      /spec\.groups\[0\]: Invalid value: "system:masters": groups starting with "system:" are reserved/,
  },
  {
    name: 'a user adds system:masters to an own key by a patch',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/ownedaccesskeys/k-bob`,
    body: { spec: { groups: ['system:masters'] } },
    contentType: merge,
    expect: 422,
    message: /spec\.groups\[0\]: Invalid value: "system:masters"/,
  },
  {
    name: 'admin gives a key a system: group other than masters',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['system:nodes'] }),
    expect: 422,
  },
  {
    name: 'admin makes a key for the subject system:admin',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'system:admin' }),
    expect: 422,
    message: /spec\.subject: Invalid value: "system:admin": names starting with "system:" are reserved/,
  },
  {
    name: 'admin makes a key for a host service account subject',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'system:serviceaccount:kube-system:default' }),
    expect: 422,
  },
  {
    name: 'admin makes a key for a system: user',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'system:kube-controller-manager' }),
    expect: 422,
    message: /spec\.user: Invalid value: "system:kube-controller-manager"/,
  },
  {
    name: 'admin makes a subject key that would speak for a team',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'team:ops' }),
    expect: 422,
    message: /spec\.subject: Invalid value: "team:ops": names starting with "team:" are reserved/,
  },
  {
    name: 'a user makes a key for a system: subject: 422 before any permission check',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'system:admin' }),
    expect: 422,
  },
  {
    name: 'admin makes a key for an ordinary subject',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ subject: 'ci-runner' }),
    expect: 201,
  },
  {
    name: 'admin may give a key the administrators group',
    as: 'admin',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob', groups: ['platform:admins'] }),
    expect: 201,
  },
  {
    name: "read another user's key",
    as: 'k-bob',
    path: `${API}/ownedaccesskeys/k-alice`,
    expect: 403,
    message: forbidden('bob', 'get', 'ownedaccesskeys', 'k-alice'),
  },
  {
    name: "delete another user's key",
    as: 'k-bob',
    method: 'DELETE',
    path: `${API}/ownedaccesskeys/k-alice`,
    expect: 403,
  },
  {
    name: 'read own key: the value is never shown',
    as: 'k-bob',
    path: `${API}/ownedaccesskeys/k-bob`,
    expect: 200,
    check: (b) => assert.equal((b['spec'] as { key: string }).key, ''),
  },
  {
    name: 'key list holds own keys only',
    as: 'k-bob',
    path: `${API}/ownedaccesskeys`,
    expect: 200,
    check: (b) => {
      const items = b['items'] as { spec: { user?: string; team?: string } }[];
      assert.ok(items.length >= 2);
      for (const k of items) assert.ok(k.spec.user === 'bob' || k.spec.team === 'qa', JSON.stringify(k.spec));
    },
  },
  {
    name: 'update own key',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/ownedaccesskeys/k-bob`,
    body: { spec: { displayName: 'mine' } },
    contentType: merge,
    expect: 200,
  },
  { name: 'a team key reads its team', as: 'k-team-devs', path: `${API}/teams/devs`, expect: 200 },
  {
    name: "a team key does not act for the team's members",
    as: 'k-team-devs',
    path: `${API}/users/alice`,
    expect: 403,
  },
  {
    name: "a member manages the team's keys",
    as: 'k-alice',
    path: `${API}/ownedaccesskeys/k-team-devs`,
    expect: 200,
  },
  {
    name: 'selves: who a user is',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/selves`,
    body: { apiVersion: `${GROUP}/v1`, kind: 'Self' },
    expect: 201,
    check: (b) => {
      const status = b['status'] as { user: { name: string; teams: { name: string }[] }; accessKey: string };
      assert.equal(status.user.name, 'bob');
      assert.deepEqual(
        status.user.teams.map((t) => t.name),
        ['qa'],
      );
      assert.equal(status.accessKey, 'k-bob');
    },
  },
  {
    name: 'selves: a team key',
    as: 'k-team-devs',
    method: 'POST',
    path: `${API}/selves`,
    body: {},
    expect: 201,
    check: (b) => assert.equal((b['status'] as { team: { name: string } }).team.name, 'devs'),
  },
  {
    name: 'selves: the scope of the key in use',
    as: 'k-alice-cli',
    method: 'POST',
    path: `${API}/selves`,
    body: {},
    expect: 201,
    check: (b) =>
      assert.deepEqual((b['status'] as { accessKeyScope: unknown }).accessKeyScope, {
        roles: [{ role: 'platformCLI' }],
      }),
  },
  {
    name: 'selves: allowed whatever the scope',
    as: 'k-alice-proj',
    method: 'POST',
    path: `${API}/selves`,
    body: {},
    expect: 201,
  },

  // ---- access rules -------------------------------------------------------------------------------
  { name: 'rule grants get on a team', as: 'k-bob', path: `${API}/teams/devs`, expect: 200 },
  {
    name: 'rule grants patch on a team',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/teams/devs`,
    body: { spec: { displayName: 'Devs' } },
    contentType: merge,
    expect: 200,
  },
  {
    name: 'rule does not grant delete',
    as: 'k-bob',
    method: 'DELETE',
    path: `${API}/teams/devs`,
    expect: 403,
    message: forbidden('bob', 'delete', 'teams', 'devs'),
  },
  {
    name: 'wildcard verb: patch',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank`,
    body: { spec: { displayName: 'H' } },
    contentType: merge,
    expect: 200,
  },
  { name: 'wildcard verb: delete', as: 'k-bob', method: 'DELETE', path: `${API}/users/ivan`, expect: 200 },
  {
    name: 'wildcard verb does not reach unlisted subresources',
    as: 'k-bob',
    path: `${API}/users/hank/accesskeys`,
    expect: 403,
    message: `users.${GROUP} "hank" is forbidden: User "bob" cannot get resource "users/accesskeys" in API group "${GROUP}" at the cluster scope`,
  },
  {
    name: 'subresource rule through a team',
    as: 'k-bob',
    path: `${API}/users/alice/accesskeys`,
    expect: 200,
  },
  { name: 'a subresource rule covers the object too', as: 'k-bob', path: `${API}/users/alice`, expect: 200 },
  {
    name: 'a rule listing status grants its verbs on the status subresource',
    as: 'k-bob',
    path: `${API}/users/alice/status`,
    expect: 200,
  },
  {
    name: 'a rule listing status grants only its verbs there',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/alice/status`,
    body: { status: { teams: [] } },
    contentType: merge,
    expect: 403,
    message: `users.${GROUP} "alice" is forbidden: User "bob" cannot patch resource "users/status" in API group "${GROUP}" at the cluster scope`,
  },
  {
    name: 'wildcard verb does not reach the status subresource',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank/status`,
    body: { status: { teams: [] } },
    contentType: merge,
    expect: 403,
    message: `users.${GROUP} "hank" is forbidden: User "bob" cannot patch resource "users/status" in API group "${GROUP}" at the cluster scope`,
  },
  {
    name: 'reading one’s own status is reading oneself',
    as: 'k-bob',
    path: `${API}/users/bob/status`,
    expect: 200,
  },
  {
    name: 'owner of a shared secret reads it',
    as: 'k-alice',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 200,
  },
  {
    name: 'owner of a shared secret changes it',
    as: 'k-alice',
    method: 'PATCH',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    body: { spec: { description: 'x' } },
    contentType: merge,
    expect: 200,
  },
  {
    name: 'no rule for the caller on a shared secret',
    as: 'k-bob',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 403,
    message: forbidden('bob', 'get', 'sharedsecrets', 's1', 'in the namespace "ns1"'),
  },
  {
    name: 'team rule reached through a key group',
    as: 'k-hank-devs',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 200,
  },
  { name: 'rule for every user', as: 'k-bob', path: `${API}/namespaces/ns1/sharedsecrets/s3`, expect: 200 },
  { name: 'no rules at all', as: 'k-bob', path: `${API}/namespaces/ns1/sharedsecrets/s2`, expect: 403 },
  {
    name: 'shared secret list is filtered',
    as: 'k-bob',
    path: `${API}/namespaces/ns1/sharedsecrets`,
    expect: 200,
    names: ['s3'],
  },
  {
    name: 'owner sees owned and shared secrets',
    as: 'k-alice',
    path: `${API}/namespaces/ns1/sharedsecrets`,
    expect: 200,
    names: ['s1', 's3'],
  },
  {
    name: 'list across namespaces is filtered',
    as: 'k-bob',
    path: `${API}/sharedsecrets`,
    expect: 200,
    names: ['s3'],
  },

  // ---- escalation ------------------------------------------------------------------------------------
  {
    name: 'patch a team the caller may patch, adding themselves',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/teams/devs`,
    body: { spec: { users: ['bob'] } },
    contentType: merge,
    expect: 403,
    message: /cannot change the members of the team: that needs the "bind" verb/,
  },
  {
    name: 'give a User groups through a wildcard rule',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank`,
    body: { spec: { groups: ['platform:admins'] } },
    contentType: merge,
    expect: 403,
    message: /cannot change spec.groups: only administrators may/,
  },
  {
    name: 'give a User the admin cluster role',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank`,
    body: { spec: { clusterRoles: [{ name: ADMIN_ROLE }] } },
    contentType: merge,
    expect: 403,
  },
  {
    name: 'add an access rule without bind',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/teams/devs`,
    body: { spec: { access: [{ verbs: ['*'], users: ['bob'] }] } },
    contentType: merge,
    expect: 403,
    message: /needs the "bind" verb/,
  },
  {
    name: 'pass on rights the caller holds (wildcard includes bind)',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank`,
    body: {
      spec: {
        access: [
          { verbs: ['*'], users: ['bob'] },
          { verbs: ['get'], users: ['alice'] },
        ],
      },
    },
    contentType: merge,
    expect: 200,
  },
  {
    name: 'tokenGeneration may not go back',
    as: 'admin',
    method: 'PATCH',
    path: `${API}/users/dave`,
    body: { spec: { tokenGeneration: 1 } },
    contentType: merge,
    expect: 422,
    message: /may not be decreased/,
  },

  // ---- scopes ---------------------------------------------------------------------------------------------
  { name: 'platformCLI role reads', as: 'k-alice-cli', path: `${API}/users/alice`, expect: 200 },
  {
    name: 'platformCLI role does not write',
    as: 'k-alice-cli',
    method: 'PATCH',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    body: { spec: { description: 'y' } },
    contentType: merge,
    expect: 403,
    message: `${forbidden('alice', 'patch', 'sharedsecrets', 's1', 'in the namespace "ns1"')}: the scope of access key "k-alice-cli" does not allow this request (scope: roles [platformCLI])`,
  },
  {
    name: 'platformCLI role creates no keys',
    as: 'k-alice-cli',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'alice' }),
    expect: 403,
    message: /scope of access key "k-alice-cli"/,
  },
  {
    name: 'platformCLI role lists what the owner sees',
    as: 'k-alice-cli',
    path: `${API}/namespaces/ns1/sharedsecrets`,
    expect: 200,
    names: ['s1', 's3'],
  },
  {
    name: 'deprecated allowPlatformCli reads',
    as: 'k-alice-legacy-cli',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 200,
  },
  {
    name: 'deprecated allowPlatformCli does not delete',
    as: 'k-alice-legacy-cli',
    method: 'DELETE',
    path: `${API}/ownedaccesskeys/k-alice`,
    expect: 403,
  },
  {
    name: 'project scope: outside the project',
    as: 'k-alice-proj',
    path: `${API}/users/alice`,
    expect: 403,
    message: /the scope of access key "k-alice-proj" does not allow this request \(scope: projects \[p1\]\)/,
  },
  {
    name: 'project scope: inside the project',
    as: 'k-alice-proj',
    path: `${API}/namespaces/p-p1/sharedsecrets/s4`,
    expect: 200,
  },
  {
    name: 'project scope: another project',
    as: 'k-alice-proj',
    path: `${API}/namespaces/p-p2/sharedsecrets/s5`,
    expect: 403,
  },
  {
    name: 'project scope: a namespace of no project',
    as: 'k-alice-proj',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 403,
  },
  {
    name: 'project scope never widens the owner',
    as: 'k-alice-proj',
    path: `${API}/namespaces/p-p1/sharedsecrets`,
    expect: 200,
    names: ['s4'],
  },
  {
    name: 'deprecated rules: named object',
    as: 'k-alice-rules',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 200,
  },
  {
    name: 'deprecated rules: other name',
    as: 'k-alice-rules',
    path: `${API}/namespaces/ns1/sharedsecrets/s3`,
    expect: 403,
  },
  {
    name: 'deprecated rules: list filtered by resourceNames',
    as: 'k-alice-rules',
    path: `${API}/namespaces/ns1/sharedsecrets`,
    expect: 200,
    names: ['s1'],
  },
  {
    name: 'deprecated rules: verb not listed',
    as: 'k-alice-rules',
    method: 'DELETE',
    path: `${API}/namespaces/ns1/sharedsecrets/s1`,
    expect: 403,
  },
  {
    name: 'deprecated rules: namespace not listed',
    as: 'k-alice-rules',
    path: `${API}/namespaces/p-p1/sharedsecrets/s4`,
    expect: 403,
  },
  {
    name: 'deprecated rules: cluster rules never match management requests',
    as: 'k-alice-cluster-rule',
    path: `${API}/users/alice`,
    expect: 403,
  },
  {
    name: 'virtual cluster scope reaches no user',
    as: 'k-alice-vc',
    path: `${API}/users/alice`,
    expect: 403,
  },
  {
    name: 'a scoped key cannot mint an unscoped key',
    as: 'k-alice-keys',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'alice' }),
    expect: 403,
    message: /keys it creates or changes must carry exactly its scope/,
  },
  {
    name: 'a scoped key may mint a key of its own scope',
    as: 'k-alice-keys',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({
      user: 'alice',
      scope: {
        rules: [{ verbs: ['create'], resources: [{ group: GROUP, resources: ['ownedaccesskeys'] }] }],
      },
    }),
    expect: 201,
  },
  {
    name: 'scope narrows an administrator: reads',
    as: 'k-admin-cli',
    path: `${API}/users/alice`,
    expect: 200,
  },
  {
    name: 'scope narrows an administrator: no writes',
    as: 'k-admin-cli',
    method: 'DELETE',
    path: `${API}/teams/qa`,
    expect: 403,
    message: /scope of access key "k-admin-cli"/,
  },
  { name: 'discovery whatever the scope', as: 'k-alice-proj', path: '/apis', expect: 200 },

  // ---- blockOwnerDeletion ------------------------------------------------------------------------------------
  {
    name: 'blockOwnerDeletion on an owner the caller may not delete',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob' }, { name: 'bob-blocking', ownerReferences: [blockingRef('Team', 'devs')] }),
    expect: 422,
    message: `OwnedAccessKey.${GROUP} "bob-blocking" is invalid: metadata.ownerReferences[0].blockOwnerDeletion: Forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete: User "bob" cannot delete resource "teams" in API group "${GROUP}" at the cluster scope`,
  },
  {
    name: 'blockOwnerDeletion on an owner the caller may delete',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'bob' }, { ownerReferences: [blockingRef('User', 'hank')] }),
    expect: 201,
  },
  {
    name: 'an owner reference that does not block',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody(
      { user: 'bob' },
      { ownerReferences: [{ ...blockingRef('Team', 'devs'), blockOwnerDeletion: false }] },
    ),
    expect: 201,
  },
  {
    name: 'blockOwnerDeletion on an owner of an unknown kind',
    as: 'k-bob',
    method: 'POST',
    path: `${API}/ownedaccesskeys`,
    body: keyBody(
      { user: 'bob' },
      { ownerReferences: [{ ...blockingRef('Deployment', 'web'), apiVersion: 'apps/v1' }] },
    ),
    expect: 422,
  },
  {
    name: 'administrators may block any owner',
    as: 'admin',
    method: 'POST',
    path: `${API}/namespaces/ns1/sharedsecrets`,
    body: { metadata: { generateName: 's-', ownerReferences: [blockingRef('Team', 'devs')] }, spec: {} },
    expect: 201,
  },

  // ---- impersonation (Impersonate-* headers) --------------------------------------------------------------------
  {
    name: 'impersonation: an administrator acts as a plain user',
    as: 'admin',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/users/alice`,
    expect: 200,
  },
  {
    name: "impersonation: an administrator acting as a plain user has only that user's rights",
    as: 'admin',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/users/admin`,
    expect: 403,
    message: forbidden('alice', 'get', 'users', 'admin'),
  },
  {
    name: 'impersonation: lists hold what the impersonated user may see',
    as: 'admin',
    headers: { 'impersonate-user': 'bob' },
    path: `${API}/users`,
    expect: 200,
    check: (body) => {
      const names = (body['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name);
      assert.ok(names.includes('bob') && !names.includes('admin') && !names.includes('carol'), names.join());
    },
  },
  {
    name: 'impersonation: whoami answers the impersonated user',
    as: 'admin',
    method: 'POST',
    headers: { 'impersonate-user': 'alice', 'impersonate-group': 'qa-leads' },
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    expect: 201,
    check: (body) =>
      assert.deepEqual((body['status'] as { userInfo: unknown }).userInfo, {
        username: 'alice',
        groups: ['qa-leads', 'system:authenticated'],
      }),
  },
  {
    name: 'impersonation: no credential is minted for the impersonated user, not even by an administrator',
    as: 'admin',
    method: 'POST',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/ownedaccesskeys`,
    body: keyBody({ user: 'alice' }),
    expect: 403,
    message: `${forbidden('alice', 'create', 'ownedaccesskeys', '')}: ${IMPERSONATION_CANNOT_MINT_REASON}`,
  },
  {
    name: 'impersonation: nor a direct cluster endpoint token',
    as: 'admin',
    method: 'POST',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/directclusterendpointtokens`,
    body: { spec: { ttl: 600 } },
    expect: 403,
    message: `${forbidden('alice', 'create', 'directclusterendpointtokens', '')}: ${IMPERSONATION_CANNOT_MINT_REASON}`,
  },
  {
    name: 'impersonation: a rule naming impersonate on a User lets its users act as that user',
    as: 'k-alice',
    headers: { 'impersonate-user': 'bob' },
    path: `${API}/users/bob`,
    expect: 200,
  },
  {
    name: "impersonation: a plain user is refused with upstream's wording",
    as: 'k-bob',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/users/bob`,
    expect: 403,
    message:
      'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
  },
  {
    name: 'impersonation: neither a * rule nor ownership grants it',
    as: 'k-bob',
    headers: { 'impersonate-user': 'hank' },
    path: `${API}/users/hank`,
    expect: 403,
    message:
      'users "hank" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
  },
  {
    name: 'impersonation: a rule on a User grants no groups',
    as: 'k-alice',
    headers: { 'impersonate-user': 'bob', 'impersonate-group': 'platform:admins' },
    path: `${API}/users/bob`,
    expect: 403,
    message:
      'groups "platform:admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
  },
  {
    name: "impersonation: a scoped key may not impersonate, not even an administrator's",
    as: 'k-admin-cli',
    headers: { 'impersonate-user': 'alice' },
    path: `${API}/users/alice`,
    expect: 403,
    message: `users "alice" is forbidden: User "admin" cannot impersonate resource "users" in API group "" at the cluster scope: ${SCOPED_CANNOT_IMPERSONATE_REASON}`,
  },
  {
    name: 'impersonation: a disabled user is impersonated by nobody',
    as: 'k-alice',
    headers: { 'impersonate-user': 'carol' },
    path: `${API}/users/carol`,
    expect: 403,
    message:
      'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope: the user "carol" is disabled',
  },
  {
    name: "impersonation: ... not even by an administrator, as the aggregator's path refuses it",
    as: 'admin',
    headers: { 'impersonate-user': 'carol' },
    path: `${API}/users/carol`,
    expect: 403,
    message:
      'users "carol" is forbidden: User "admin" cannot impersonate resource "users" in API group "" at the cluster scope: the user "carol" is disabled',
  },
  {
    name: 'impersonation: groups without a user are a 400',
    as: 'admin',
    headers: { 'impersonate-group': 'devs' },
    path: `${API}/users`,
    expect: 400,
    message: 'requested [{Group  devs    }] without impersonating a user',
  },
  {
    name: 'impersonation: only who holds impersonate may grant it',
    as: 'k-bob',
    method: 'PATCH',
    path: `${API}/users/hank`,
    body: {
      spec: {
        access: [
          { verbs: ['*'], users: ['bob'] },
          { verbs: ['impersonate'], users: ['bob'] },
        ],
      },
    },
    contentType: merge,
    expect: 403,
    message: /cannot grant the verb "impersonate": only administrators may/,
  },

  // ---- non-resource paths ---------------------------------------------------------------------------------------
  { name: 'discovery for everyone', as: 'k-bob', path: `/apis/${GROUP}/v1`, expect: 200 },
  {
    name: 'discovery under the management prefix',
    as: 'k-bob',
    path: '/kubernetes/management/apis',
    expect: 200,
  },
  { name: 'OpenAPI for everyone', as: 'k-bob', path: '/openapi/v2', expect: 200 },
  {
    name: 'other paths are forbidden',
    as: 'k-bob',
    path: '/metrics',
    expect: 403,
    message: 'forbidden: User "bob" cannot get path "/metrics"',
  },
];

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function call(baseUrl: string, ca: string, token: string | null, row: Row): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json', ...(row.headers ?? {}) };
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  const payload = row.body === undefined ? undefined : JSON.stringify(row.body);
  if (payload !== undefined) headers['content-type'] = row.contentType ?? 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${row.path}`, { method: row.method ?? 'GET', ca, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { text };
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('the security table', { timeout: 120_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'security-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const options = new ServerOptions({
    dataDir,
    securePort: 0,
    etcdPrefix: KEY_PREFIX,
    adminRole: ADMIN_ROLE,
    tokenIssuer: TOKEN_ISSUER,
  }).complete();
  const logLines: string[] = [];
  const logger = new JsonLogger('debug', {
    write: (chunk: string | Uint8Array) => logLines.push(String(chunk)) > 0,
  });
  const config = await buildServerConfig(options, logger);
  const server = await startServer(config);
  t.after(() => server.stop());

  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  const ca = Buffer.from(
    kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '',
    'base64',
  ).toString();
  const adminToken = kubeconfig.users[0]?.user.token ?? '';

  const seeded = await seedFixtures(config.storage);
  const cache = config.accessKeys.cache;
  const ready = await cache.waitFor(
    () =>
      seeded.users.every((u) => cache.user(u)) &&
      seeded.teams.every((n) => cache.team(n)) &&
      seeded.keys.every((k) => cache.accessKey(k)) &&
      seeded.secrets.every((s) => cache.accessHolder('sharedsecrets', s.namespace, s.name)),
    10_000,
  );
  assert.ok(ready, 'the fixtures reached the identity cache');

  // Tokens are minted by the minting code of POST directclusterendpointtokens, signed with
  // the server's own keys: also for keys no API call could mint with any more.
  const signingKeys = new SigningKeyManager({
    store: new FileKeyStore(join(dataDir, 'tokens')),
    rotationPeriodMs: 0,
    gracePeriodMs: 0,
  });
  await signingKeys.init();
  const minter = {
    issuer: new TokenIssuer(signingKeys, { issuer: TOKEN_ISSUER, audience: GROUP }),
    users: { user: (name: string) => Promise.resolve(cache.user(name)) },
  };
  const tokenOf = async (as: string): Promise<string> => {
    const [kind, name = ''] = as.split(':');
    if (kind === 'token-without-key') return issueCallerToken(minter, { name, groups: [] }, 600, undefined);
    const key = cache.accessKey(name);
    const identity = key && accessKeyIdentity(key, cache, keyRevisionAnnotation(GROUP));
    assert.ok(identity, `no fixture key ${name}`);
    const caller: AuthenticatedUser =
      kind === 'token-wrong-uid'
        ? { ...identity, accessKeyUid: randomUUID() }
        : kind === 'token-old-value'
          ? { ...identity, accessKeyDigest: 'digest-of-an-earlier-value' }
          : identity;
    return issueCallerToken(minter, caller, 600, caller.scope);
  };

  assert.ok(ROWS.length >= 80, `${ROWS.length} rows`);
  for (const row of ROWS) {
    await t.test(row.name, async () => {
      const token =
        row.as === null
          ? null
          : row.as === 'admin'
            ? adminToken
            : row.as.startsWith('token')
              ? await tokenOf(row.as)
              : plainKey(row.as);
      const reply = await call(server.url, ca, token, row);
      const where = `${row.method ?? 'GET'} ${row.path} as ${row.as ?? 'nobody'}: ${JSON.stringify(reply.body)}`;
      assert.equal(reply.status, row.expect, where);
      if (row.message !== undefined) {
        const message = String(reply.body['message']);
        if (typeof row.message === 'string') assert.equal(message, row.message, where);
        else assert.match(message, row.message, where);
      }
      if (row.names) {
        const items = (reply.body['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name);
        assert.deepEqual([...items].sort(), [...row.names].sort(), where);
      }
      row.check?.(reply.body);
    });
  }

  await t.test('no key appears in any log line', () => {
    assert.ok(logLines.length > ROWS.length, 'every request was logged');
    const secrets = [adminToken, ...seeded.keys.map(plainKey)];
    for (const line of logLines) for (const secret of secrets) assert.ok(!line.includes(secret), line);
  });
});
