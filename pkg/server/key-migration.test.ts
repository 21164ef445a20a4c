// The start-up key migration through the whole server: keys that an older server
// left orphaned from a former owner of their owner's name, with nothing recorded,
// are found at the next start, recorded as a former owner's (so the User of that
// name now never gets them), refused by the authenticator, and named in the log
// without any key material. The stored keys are edited between two starts as an
// older server would have left them.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  formerOwnerAnnotation,
  hashAccessKey,
  keyRevisionAnnotation,
  UNKNOWN_FORMER_OWNER,
} from '../apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../apis/meta/types.js';
import { ServerOptions } from '../apiserver/options/server-run-options.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../storage/store.js';
import { JsonLogger } from '../util/log/index.js';
import { collectionPrefix } from './resources.js';
import { run } from './serve.js';
import { SQLITE_FILE } from './storage.js';
import { adminCredentials, callServer, startWithAdmin } from './testing.js';

const GROUP = 'management.platform.dev';
const API = `/kubernetes/management/apis/${GROUP}/v1`;
const KEYS = collectionPrefix('/registry', GROUP, 'ownedaccesskeys');
const FORMER_OWNER = formerOwnerAnnotation(GROUP);
const CAROL_KEY = 'carol-plain-key-for-the-migration-test';
const STALE_KEY = 'stale-plain-key-for-the-migration-test';
const EARLY_KEY = 'early-plain-key-for-the-migration-test';
const REVISION = keyRevisionAnnotation(GROUP);

test('keys orphaned before the former owner was recorded are recorded at the next start and authenticate nobody', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'key-migration-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startWithAdmin(dataDir);
  const { ca, token } = first;
  const url = first.server.url;
  const created = async (path: string, body: unknown): Promise<void> => {
    const a = await callServer(`${url}${API}/${path}`, ca, token, 'POST', body);
    assert.equal(a.status, 201, a.text);
  };
  await created('users', { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name: 'carol' }, spec: {} });
  for (const [name, key] of [
    ['carol-key', CAROL_KEY],
    ['stale-key', STALE_KEY],
    ['kept-key', 'kept-plain-key-for-the-migration-test'],
    ['early-key', EARLY_KEY],
  ] as const) {
    await created('ownedaccesskeys', {
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: { name },
      spec: { user: 'carol', key },
    });
  }
  assert.equal((await callServer(`${url}${API}/users/carol`, ca, CAROL_KEY)).status, 200);
  await first.server.stop();

  // As an older server left them once an earlier carol was deleted with --cascade=orphan
  // and this one created: one key with no reference (relabelled, then orphaned), made
  // before this carol; one whose reference still names the earlier carol.
  const storage = new KVStorage(SqliteKV.open(join(dataDir, SQLITE_FILE)));
  try {
    const rewrite = async (name: string, change: (key: KubeObject) => KubeObject): Promise<void> => {
      await storage.guaranteedUpdate(KEYS + name, (cur) => change(cur!));
    };
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    // Stored before keys carried a revision, as that older server stored every key.
    await rewrite('carol-key', (k) => {
      const { ownerReferences: _dropped, ...metadata } = k.metadata;
      const { [REVISION]: _revision, ...annotations } = metadata.annotations ?? {};
      return { ...k, metadata: { ...metadata, annotations, creationTimestamp: dayAgo } };
    });
    // By this server, for a name with no owner yet, as a GitOps tool applies a key
    // before its User: older than its owner, yet the owner's, and adopted.
    await rewrite('early-key', (k) => {
      const { ownerReferences: _dropped, ...metadata } = k.metadata;
      assert.ok(metadata.annotations?.[REVISION], 'this server gives every key a revision');
      return { ...k, metadata: { ...metadata, creationTimestamp: dayAgo } };
    });
    await rewrite('stale-key', (k) => ({
      ...k,
      metadata: {
        ...k.metadata,
        ownerReferences: (k.metadata.ownerReferences ?? []).map((r) => ({
          ...r,
          uid: 'uid-of-an-earlier-carol',
        })),
      },
    }));
  } finally {
    await storage.close();
  }

  let logText = '';
  // Without the in-server collector, as with a host cluster whose collector is slow or
  // off: with it, the key whose only reference names a gone owner is simply deleted.
  const options = new ServerOptions({
    dataDir,
    securePort: 0,
    logLevel: 'info',
    enableGarbageCollector: false,
  }).complete();
  const server = await run(
    options,
    new JsonLogger('info', { write: (chunk: string) => ((logText += chunk), true) }),
    {
      shutdownTimeoutMs: 5000,
    },
  );
  t.after(() => server.stop());
  const admin = adminCredentials(dataDir).token;
  const key = async (name: string): Promise<KubeObject> => {
    const a = await callServer(`${server.url}${API}/ownedaccesskeys/${name}`, ca, admin);
    assert.equal(a.status, 200, a.text);
    return JSON.parse(a.text) as KubeObject;
  };

  const carolKey = await key('carol-key');
  assert.equal(carolKey.metadata.annotations?.[FORMER_OWNER], UNKNOWN_FORMER_OWNER);
  assert.equal(carolKey.metadata.ownerReferences, undefined, 'not adopted by the current carol');
  const staleKey = await key('stale-key');
  assert.equal(staleKey.metadata.annotations?.[FORMER_OWNER], 'uid-of-an-earlier-carol');
  const keptKey = await key('kept-key');
  assert.equal(keptKey.metadata.annotations?.[FORMER_OWNER], undefined);
  const earlyKey = await key('early-key');
  assert.equal(earlyKey.metadata.annotations?.[FORMER_OWNER], undefined);
  assert.equal(earlyKey.metadata.ownerReferences?.[0]?.name, 'carol', 'adopted by carol');

  for (const [name, plain] of [
    ['carol-key', CAROL_KEY],
    ['stale-key', STALE_KEY],
  ] as const) {
    const refused = await callServer(`${server.url}${API}/users/carol`, ca, plain);
    assert.equal(refused.status, 401, refused.text);
    // What it would say with no carol at all; which former carol goes to the log only.
    assert.equal(
      JSON.parse(refused.text).message,
      `the user "carol" the access key "${name}" was made for no longer exists; use another key (a user created again with that name does not inherit it)`,
    );
  }
  for (const plain of ['kept-plain-key-for-the-migration-test', EARLY_KEY]) {
    assert.equal((await callServer(`${server.url}${API}/users/carol`, ca, plain)).status, 200);
  }

  const warning = logText
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => typeof l['msg'] === 'string' && l['msg'].includes('keys of a former owner'));
  assert.ok(warning, 'the migration says what it found');
  assert.equal(warning['orphaned'], 2);
  assert.deepEqual([...(warning['keys'] as string[])].sort(), ['carol-key', 'stale-key']);
  for (const secret of [CAROL_KEY, STALE_KEY, hashAccessKey(CAROL_KEY), hashAccessKey(STALE_KEY)]) {
    assert.ok(!logText.includes(secret), 'no key material in the log');
  }
});
