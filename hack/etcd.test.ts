// The test etcd harness: it starts a usable etcd, stop() leaves nothing behind, a
// caller's data dir survives a restart, and a test process that is killed outright
// takes its etcd with it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { startEtcd } from './etcd.js';

/** Uses etcd's JSON gateway, so this test depends on nothing but etcd itself. */
async function v3(
  endpoint: string,
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${endpoint}/v3/${path}`, { method: 'POST', body: JSON.stringify(body) });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

async function eventually(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('startEtcd serves a working etcd; stop() kills it and removes its temp data dir', async () => {
  const etcd = await startEtcd();
  assert.match(etcd.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(existsSync(etcd.dataDir));
  await v3(etcd.endpoint, 'kv/put', { key: b64('k'), value: b64('v') });
  const got = await v3(etcd.endpoint, 'kv/range', { key: b64('k') });
  assert.equal(
    Buffer.from(String((got['kvs'] as Array<{ value: string }>)[0]?.value), 'base64').toString(),
    'v',
  );

  await etcd.stop();
  assert.equal(existsSync(etcd.dataDir), false);
  assert.equal(await answers(etcd.endpoint), false);
  await etcd.stop(); // idempotent
});

test('a data dir the caller gives survives stop() and a restart on the same ports', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'etcd-harness-test-'));
  try {
    const first = await startEtcd({ dataDir });
    await v3(first.endpoint, 'kv/put', { key: b64('kept'), value: b64('yes') });
    await first.stop();
    assert.ok(existsSync(join(dataDir, 'member')));

    const second = await startEtcd({ dataDir, clientPort: first.clientPort, peerPort: first.peerPort });
    try {
      assert.equal(second.endpoint, first.endpoint);
      const got = await v3(second.endpoint, 'kv/range', { key: b64('kept') });
      assert.equal(got['count'], '1');
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an etcd that cannot start fails with its own stderr in the error', async () => {
  const first = await startEtcd();
  try {
    await assert.rejects(
      startEtcd({ clientPort: first.clientPort, startTimeoutMs: 10_000 }),
      (err: Error) => {
        assert.match(err.message, /etcd exited before becoming healthy/);
        assert.match(err.message, /address already in use/);
        return true;
      },
    );
  } finally {
    await first.stop();
  }
});

test('a test process killed with SIGKILL leaves no etcd and no data dir behind', async () => {
  // Run the harness in a child process exactly as this file runs (tsx or compiled).
  const here = fileURLToPath(import.meta.url);
  const harness = join(dirname(here), `etcd${extname(here)}`);
  const script = `
    const { startEtcd } = await import(${JSON.stringify(harness)});
    const etcd = await startEtcd();
    process.stdout.write(JSON.stringify({ endpoint: etcd.endpoint, dataDir: etcd.dataDir }) + '\\n');
    process.kill(process.pid, 'SIGKILL');
  `;
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT'];
  const child = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, sig) => resolve(sig)),
  );
  assert.equal(signal, 'SIGKILL', `child did not get as far as killing itself: ${err}`);
  const started = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { endpoint: string; dataDir: string };

  await eventually('the orphaned etcd is gone', async () => !(await answers(started.endpoint)));
  await eventually('its data dir is removed', () => !existsSync(started.dataDir));
});
