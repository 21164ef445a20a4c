// The process contract: bad flags exit 2 with one line and no stack trace, --help
// exits 0, and a started server logs where it serves and exits 0 on SIGTERM.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';

// Runs from dist/ (compiled main.js) and from the sources under tsx (main.ts).
const here = fileURLToPath(import.meta.url);
const fromSource = here.endsWith('.ts');
const mainFile = join(here, '..', fromSource ? 'main.ts' : 'main.js');
const nodeArgs = fromSource ? ['--import', 'tsx', mainFile] : [mainFile];

function runMain(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...nodeArgs, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('invalid flags: exit 2, one line on stderr naming every problem, no stack trace', () => {
  const r = runMain(['--secure-port=70000', '--storage-backend=etcd3']);
  assert.equal(r.status, 2);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(r.stderr, /--secure-port: 70000 is not a port number/);
  assert.match(r.stderr, /--etcd-servers: required with --storage-backend etcd3/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('an unknown flag is reported with every other problem: exit 2 with one line', () => {
  const r = runMain(['--sekure-port', '1', '--secure-port', 'abc']);
  assert.equal(r.status, 2);
  assert.equal(
    r.stderr.trim(),
    'platform-apiserver: invalid flags: unknown flag: --sekure-port; --secure-port: "abc" is not a port number (an integer from 0 to 65535) (see --help)',
  );
});

test('--help prints the usage and exits 0', () => {
  const r = runMain(['--help']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /--secure-port/);
  assert.equal(r.stderr, '');
});

/** Starts the server with `nodeFlags`, waits for "serving", stops it with SIGTERM: its log lines up to "serving". */
async function startAndStop(
  t: TestContext,
  nodeFlags: readonly string[],
): Promise<{ lines: Record<string, unknown>[]; serving: Record<string, unknown> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'main-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(
    process.execPath,
    [...nodeFlags, ...nodeArgs, '--secure-port', '0', '--data-dir', dataDir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines: Record<string, unknown>[] = [];
  const serving = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.msg === 'serving') resolve(entry);
    });
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  return { lines, serving };
}

const nodeFlagsWarning = (lines: readonly Record<string, unknown>[]): Record<string, unknown> | undefined =>
  lines.find((l) => l.level === 'warn' && /node flags/.test(String(l.msg)));

test('a started server logs JSON lines with its URL and exits 0 on SIGTERM', async (t) => {
  const { lines, serving } = await startAndStop(t, SERVER_NODE_FLAGS);
  assert.match(String(serving.url), /^https:\/\/127\.0\.0\.1:\d+$/);
  for (const entry of lines) {
    assert.equal(typeof entry.level, 'string');
    assert.equal(typeof entry.time, 'string');
  }
  assert.equal(nodeFlagsWarning(lines), undefined);
});

test("a server started without the server's node flags warns, naming them", async (t) => {
  const { lines } = await startAndStop(t, []);
  const warning = nodeFlagsWarning(lines);
  assert.ok(warning, JSON.stringify(lines));
  assert.equal(warning.nodeFlags, SERVER_NODE_FLAGS.join(' '));
});
