// CI hook for the benchmark harness: the quick run must finish and produce a complete
// table (every workload, with a figure for the server and one for its baseline). It
// asserts nothing about the figures themselves: CI machines vary, and a timing
// assert would only be noise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const fromSource = here.endsWith('.ts');
const main = join(here, '..', fromSource ? 'main.ts' : 'main.js');

/** Memory growth the quick run's small counts cannot resolve: measured, sign unknown. */
const NOISY = new Set(['idle-watch-rss']);

/** Workloads whose figure is compared with a baseline. */
const COMPARED = [
  'create-throughput',
  'create-p99',
  'create-latency',
  'list',
  'list-vs-etcd',
  'get-etcd3',
  'watch-fanout',
  'watch-fanout-etcd',
  'watch-fanout-saturation',
  'authz-scale',
  'authz-scale-floor',
  'get-sqlite',
  'get-audited',
  'create-sqlite',
  'idle-watch-heap',
  'idle-watch-rss',
  'cached-object-heap',
  'fair-queuing',
  'encryption-create',
  'encryption-get',
  'limiter-get',
  'limiter-create',
];

/**
 * Rows measured in rotated rounds (rounds.ts), whose ratio is the median of the rounds'
 * ratios: a best-of-two comparison cannot resolve their targets on a shared machine.
 */
const BY_ROUNDS = ['authz-scale', 'authz-scale-floor', 'limiter-get', 'limiter-create'];

interface ReportRow {
  id: string;
  rounds?: { ratios: number[]; cpuRatios: number[] };
  workload: string;
  server: { value: number; unit: string };
  baseline: { value: number; unit: string; label: string } | null;
  ratio: number | null;
  verdict: string;
}

test('npm run bench -- --quick produces a complete table and JSON report', { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
  try {
    const out = join(dir, 'quick.json');
    const r = spawnSync(
      process.execPath,
      [...(fromSource ? ['--import', 'tsx'] : []), main, '--quick', '--out', out],
      {
        encoding: 'utf8',
        timeout: 540_000,
      },
    );
    assert.equal(r.status, 0, `the quick bench failed:\n${r.stderr.slice(-4000)}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      mode: string;
      rows: ReportRow[];
      machine: { cpus: number };
    };
    assert.equal(report.mode, 'quick');
    assert.ok(report.machine.cpus > 0);
    const ids = report.rows.map((row) => row.id);
    for (const id of COMPARED) {
      const row = report.rows.find((x) => x.id === id);
      assert.ok(row, `no row for ${id}; rows: ${ids.join(', ')}`);
      // RSS grows in pages and the allocator returns memory when it likes: over the quick
      // run's 20 watches its growth may be zero or negative. A figure, whatever its sign.
      if (NOISY.has(id)) {
        assert.ok(Number.isFinite(row.server.value), `${id}: no server figure`);
        assert.ok(row.baseline && Number.isFinite(row.baseline.value), `${id}: no baseline`);
        continue;
      }
      assert.ok(Number.isFinite(row.server.value) && row.server.value > 0, `${id}: no server figure`);
      assert.ok(
        row.baseline && Number.isFinite(row.baseline.value) && row.baseline.value > 0,
        `${id}: no baseline`,
      );
      assert.ok(row.ratio !== null, `${id}: no ratio`);
    }
    for (const id of BY_ROUNDS) {
      const rounds = report.rows.find((x) => x.id === id)?.rounds;
      assert.ok(rounds && rounds.ratios.length >= 4, `${id}: not measured by rounds`);
      assert.equal(rounds.cpuRatios.length, rounds.ratios.length, `${id}: a CPU ratio per round`);
    }
    for (const prefix of ['scale-get-', 'scale-page-', 'scale-list-']) {
      assert.ok(
        ids.some((id) => id.startsWith(prefix)),
        `no ${prefix}* rows`,
      );
    }
    // The printed table has a line per row.
    for (const row of report.rows)
      assert.ok(r.stdout.includes(row.workload), `${row.workload} missing from the table`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--only runs just the groups it names, and refuses one it does not know', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-test-'));
  try {
    const out = join(dir, 'only.json');
    const run = (...args: string[]): ReturnType<typeof spawnSync> =>
      spawnSync(process.execPath, [...(fromSource ? ['--import', 'tsx'] : []), main, '--quick', ...args], {
        encoding: 'utf8',
        timeout: 240_000,
      });
    const r = run('--only', 'fairness', '--out', out);
    assert.equal(r.status, 0, `the quick bench failed:\n${String(r.stderr).slice(-4000)}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { only?: string[]; rows: ReportRow[] };
    assert.deepEqual(report.only, ['fairness']);
    assert.deepEqual(
      report.rows.map((row) => row.id),
      ['fair-queuing'],
    );
    const bad = run('--only', 'etcd,nope', '--out', join(dir, 'bad.json'));
    assert.notEqual(bad.status, 0);
    assert.match(
      String(bad.stderr),
      /--only: unknown group "nope"; the groups are etcd, sqlite, memory, encryption, fairness, limiter/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
