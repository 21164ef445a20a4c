// Runs every check the project has, in the order a reader would want failures:
// install test dependencies, build (which type checks), lint, unit tests, e2e tests.
// `--unit` or `--e2e` runs one group only (after the build). Tests run from the
// compiled output in dist/, so what is tested is what `npm start` runs.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = new Set(process.argv.slice(2));
const onlyUnit = args.has('--unit');
const onlyE2e = args.has('--e2e');

function run(cmd, cmdArgs, opts = {}) {
  console.log(`\n$ ${cmd} ${cmdArgs.join(' ')}`);
  const r = spawnSync(cmd, cmdArgs, { stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`\n${cmd} ${cmdArgs[0] ?? ''} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

function findTests(dir) {
  const out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

run('bash', ['hack/ensure-test-deps.sh']);
run('npx', ['tsc', '-p', 'tsconfig.build.json']);
if (!onlyUnit && !onlyE2e) run('npx', ['eslint', '.', '--max-warnings', '0']);

const nodeTest = ['--enable-source-maps', '--test', '--test-reporter=spec'];
if (!onlyE2e) {
  const unit = [...findTests('dist/pkg'), ...findTests('dist/cmd'), ...findTests('dist/hack')];
  run(process.execPath, [...nodeTest, '--test-concurrency=2', ...unit]);
}
if (!onlyUnit) {
  const e2e = findTests('dist/e2e');
  if (e2e.length > 0) run(process.execPath, [...nodeTest, '--test-concurrency=1', ...e2e]);
}
