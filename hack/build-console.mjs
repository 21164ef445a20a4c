// Builds the console: type check (console/tsconfig.json), then Vite into dist/console,
// then its unit tests (console/tsconfig.test.json) into dist/console-tests for node:test.
// `npm run build` always builds. `npm start` passes --if-changed: when dist/console
// is newer than every source of the console, nothing is built, so a start with
// nothing changed stays a timestamp check (as `tsc -b` does for the server).

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SOURCES = ['console', 'package-lock.json'];
const BUILT = join('dist', 'console', 'index.html');

/** The newest modification time under `path` (a file or a directory). */
function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

function upToDate() {
  if (!existsSync(BUILT)) return false;
  const built = statSync(BUILT).mtimeMs;
  return SOURCES.every((s) => !existsSync(s) || newest(s) <= built);
}

function run(bin, args) {
  const r = spawnSync(join('node_modules', '.bin', bin), args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv.includes('--if-changed') && upToDate()) {
  console.log('console: dist/console is up to date');
} else {
  run('tsc', ['-p', 'console/tsconfig.json']);
  run('vite', ['build', '-c', 'console/vite.config.mjs']);
  run('tsc', ['-p', 'console/tsconfig.test.json']);
}
