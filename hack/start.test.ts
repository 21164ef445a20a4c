// `npm start` builds only what changed: `tsc -b` (and hack/build-console.mjs for the console) compares the sources' timestamps with
// the build info in dist/ and, when nothing changed, starts the server without
// compiling (a full `tsc -p` took ~25 s before every start).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

// Tests run from the repository root, after the build.
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

// `exec`: the server replaces the shell npm runs, so the SIGTERM npm passes on when
// stopped (`kill %1` of a background `npm start`) reaches the server itself.
test('npm start runs the incremental build, then the built server', () => {
  assert.match(
    pkg.scripts['start'] ?? '',
    /^tsc -b tsconfig\.build\.json && node hack\/build-console\.mjs --if-changed && exec node --min-semi-space-size=16 --max-semi-space-size=16 --heap-growing-percent=100 dist\/cmd\/apiserver\/main\.js$/,
  );
  const build = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as {
    compilerOptions: { incremental?: boolean; tsBuildInfoFile?: string };
  };
  assert.equal(build.compilerOptions.incremental, true);
  // Inside dist/: removing dist/ forces a full build rather than trusting stale info.
  assert.match(build.compilerOptions.tsBuildInfoFile ?? '', /^dist\//);
});

test('after a build, a second start finds nothing to compile', () => {
  const r = spawnSync('node_modules/.bin/tsc', ['-b', 'tsconfig.build.json', '--dry', '--verbose'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const out = `${r.stdout}${r.stderr}`;
  assert.match(out, /is up to date/, out);
  assert.doesNotMatch(out, /A non-dry build would/, out);
});

test('after a build, a second start does not bundle the console again', () => {
  const r = spawnSync(process.execPath, ['hack/build-console.mjs', '--if-changed'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /dist\/console is up to date/, r.stdout);
});
