import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { SERVER_MIN_SEMI_SPACE_MIB, SERVER_NODE_FLAGS, youngGeneration } from './node-flags.js';

const moduleUrl = new URL('./node-flags.js', import.meta.url).href;
const fromSource = fileURLToPath(import.meta.url).endsWith('.ts');

/** youngGeneration() as a fresh node process started with `flags` reports it. */
function reportOf(flags: readonly string[]): { semiSpaceMiB: number; minimumGiven: boolean } {
  const script = `import(${JSON.stringify(moduleUrl.replace(/\.js$/, fromSource ? '.ts' : '.js'))}).then((m) => console.log(JSON.stringify(m.youngGeneration())))`;
  const r = spawnSync(
    process.execPath,
    [...(fromSource ? ['--import', 'tsx'] : []), ...flags, '-e', script],
    {
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { semiSpaceMiB: number; minimumGiven: boolean };
}

test('a process started with the server flags has the young generation they name from its start', () => {
  assert.deepEqual(reportOf(SERVER_NODE_FLAGS), {
    semiSpaceMiB: SERVER_MIN_SEMI_SPACE_MIB,
    minimumGiven: true,
  });
});

test("a process started without them starts with V8's own, smaller young generation and says so", () => {
  const r = reportOf([]);
  assert.equal(r.minimumGiven, false);
  assert.ok(r.semiSpaceMiB < SERVER_MIN_SEMI_SPACE_MIB, `${r.semiSpaceMiB} MiB`);
});

test('minimumGiven reads either spelling of the flag, with or without a value', () => {
  assert.equal(youngGeneration(['--min_semi_space_size=4']).minimumGiven, true);
  assert.equal(youngGeneration(['--max-semi-space-size=64']).minimumGiven, false);
});

/** The growing factors V8 (--trace-gc-verbose) reports setting the old generation's next limit with, in a process started with `flags`. */
function growingFactorsOf(flags: readonly string[]): number[] {
  const r = spawnSync(process.execPath, [...flags, '--expose-gc', '--trace-gc-verbose', '-e', 'gc(); gc()'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return [...r.stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d+)\)/g)].map((m) => Number(m[1]));
}

test('a process started with the server flags sets its old-generation limit at a fixed factor of the live size', () => {
  const percent = Number(/^--heap-growing-percent=(\d+)$/.exec(SERVER_NODE_FLAGS.find((f) => f.startsWith('--heap-growing-percent=')) ?? '')?.[1]);
  assert.ok(percent > 0, 'the flags fix the growing factor');
  const factors = growingFactorsOf(SERVER_NODE_FLAGS);
  assert.ok(factors.length >= 2, 'V8 reported the limits it set');
  assert.deepEqual(new Set(factors), new Set([1 + percent / 100]));
  // The report follows the flag (so the check above can fail): another percentage reads otherwise.
  assert.deepEqual(new Set(growingFactorsOf([...SERVER_NODE_FLAGS, '--heap-growing-percent=50'])), new Set([1.5]));
});
