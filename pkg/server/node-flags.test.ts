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
