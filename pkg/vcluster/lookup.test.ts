import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionSecret } from './connection-secret.js';
import { HostError } from './host.js';
import { IncompleteSourceError, KeyNotFoundError, describeSource, resolveConnection } from './lookup.js';
import { parseConnectionSettings } from './settings.js';
import type { ConnectionSettings } from './settings.js';
import { MemoryConnectionHost } from './testing/memory-host.js';

function settings(yaml: string): ConnectionSettings {
  const r = parseConnectionSettings(yaml);
  assert.deepEqual(r.errors, []);
  return r.settings;
}

const SHARED = settings(`
external:
  platform:
    apiKey:
      secretName: shared-key
      namespace: vc-platform
`);
const DEDICATED = settings('external:\n  platform: {}\n');
const vc = { name: 'dev', namespace: 'team-a' };

test('step 1: LICENSE (with PLATFORM_HOST) wins over every secret', async () => {
  const host = new MemoryConnectionHost();
  host.putSecret('vc-platform', 'shared-key', { accessKey: 'from-secret', host: 'p.example' });
  const r = await resolveConnection({
    settings: SHARED,
    virtualCluster: vc,
    env: { LICENSE: 'from-env', PLATFORM_HOST: 'env.example' },
    host,
  });
  assert.equal(r.accessKey, 'from-env');
  assert.equal(r.host, 'env.example');
  assert.deepEqual(r.source, { kind: 'env', variable: 'LICENSE' });
  assert.deepEqual(host.reads, [], 'no secret is read once the environment has a key');
});

test('LICENSE without PLATFORM_HOST is a clear mistake, not a silent fall-through', async () => {
  await assert.rejects(
    resolveConnection({
      settings: SHARED,
      virtualCluster: vc,
      env: { LICENSE: 'k' },
      host: new MemoryConnectionHost(),
    }),
    (err: unknown) => err instanceof IncompleteSourceError && /PLATFORM_HOST is empty/.test(err.message),
  );
});

test('step 2: the secret named by apiKey.secretName in apiKey.namespace', async () => {
  const host = new MemoryConnectionHost();
  host.putSecret('vc-platform', 'shared-key', { accessKey: 'shared', host: 'p.example', project: 'team-a' });
  host.putSecret('team-a', 'vc-platform-api-key', { accessKey: 'dedicated', host: 'p.example' });
  const r = await resolveConnection({ settings: SHARED, virtualCluster: vc, env: {}, host });
  assert.equal(r.accessKey, 'shared');
  assert.equal(r.project, 'team-a');
  assert.equal(describeSource(r.source), 'secret vc-platform/shared-key (external.platform.apiKey)');
  assert.deepEqual(host.reads, ['vc-platform/shared-key']);
});

test('step 2 without a namespace looks in the virtual cluster namespace', async () => {
  const host = new MemoryConnectionHost();
  host.putSecret('team-a', 'my-key', { accessKey: 'mine', host: 'p.example' });
  const r = await resolveConnection({
    settings: settings('external:\n  platform:\n    apiKey:\n      secretName: my-key\n'),
    virtualCluster: vc,
    env: {},
    host,
  });
  assert.equal(r.accessKey, 'mine');
  assert.deepEqual(r.source, { kind: 'secret', namespace: 'team-a', name: 'my-key', step: 'configured' });
});

test('step 3: vc-platform-api-key in the virtual cluster namespace when the configured secret is missing', async () => {
  const host = new MemoryConnectionHost();
  host.putSecret('team-a', 'vc-platform-api-key', { accessKey: 'dedicated', host: 'https://p.example/' });
  const r = await resolveConnection({ settings: SHARED, virtualCluster: vc, env: {}, host });
  assert.equal(r.accessKey, 'dedicated');
  assert.deepEqual(r.source, {
    kind: 'secret',
    namespace: 'team-a',
    name: 'vc-platform-api-key',
    step: 'default',
  });
  assert.deepEqual(host.reads, ['vc-platform/shared-key', 'team-a/vc-platform-api-key']);
  assert.deepEqual(r.lookedAt.slice(0, 2), [
    'environment variable LICENSE: not set',
    'secret vc-platform/shared-key (external.platform.apiKey): not found',
  ]);
});

test('dedicated mode reads the default secret once', async () => {
  const host = new MemoryConnectionHost();
  await assert.rejects(
    resolveConnection({ settings: DEDICATED, virtualCluster: vc, env: {}, host }),
    KeyNotFoundError,
  );
  assert.deepEqual(host.reads, ['team-a/vc-platform-api-key']);
});

test('nothing found: the error lists every place looked at and what was wrong there', async () => {
  const host = new MemoryConnectionHost();
  host.putSecret('team-a', 'vc-platform-api-key', { host: 'p.example' });
  host.forbidden.add('vc-platform/shared-key');
  await assert.rejects(
    resolveConnection({ settings: SHARED, virtualCluster: vc, env: { LICENSE: '  ' }, host }),
    (err: unknown) => {
      assert.ok(err instanceof KeyNotFoundError);
      assert.deepEqual(err.places, [
        'environment variable LICENSE: not set',
        'secret vc-platform/shared-key (external.platform.apiKey): not allowed to read it (secrets "shared-key" is forbidden)',
        'secret team-a/vc-platform-api-key (default): has no accessKey key',
      ]);
      assert.match(err.message, /^no platform access key found for virtual cluster team-a\/dev; looked at: /);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    },
  );
});

test('a host that cannot be reached is an error of its own, not "not found"', async () => {
  const host = new MemoryConnectionHost();
  host.readSecret = () => Promise.reject(new HostError('cannot reach the host cluster'));
  await assert.rejects(resolveConnection({ settings: SHARED, virtualCluster: vc, env: {}, host }), HostError);
});

test('shared mode: one secret serves two virtual clusters in different namespaces, and rotating it changes both', async () => {
  const host = new MemoryConnectionHost();
  const write = (key: string) =>
    host.applySecret(
      connectionSecret(
        { accessKey: key, host: 'https://p.example' },
        { namespace: 'vc-platform', name: 'shared-key' },
        'shared',
      ),
    );
  await write('first-key');
  const a = { name: 'dev', namespace: 'team-a' };
  const b = { name: 'dev', namespace: 'team-b' };
  for (const v of [a, b]) {
    const r = await resolveConnection({ settings: SHARED, virtualCluster: v, env: {}, host });
    assert.equal(r.accessKey, 'first-key');
    assert.equal(r.host, 'p.example', 'the secret holds the host without its scheme');
  }
  assert.equal(await write('second-key'), 'updated');
  for (const v of [a, b]) {
    assert.equal(
      (await resolveConnection({ settings: SHARED, virtualCluster: v, env: {}, host })).accessKey,
      'second-key',
    );
  }
});
