// Every way the server is started carries the server's node flags
// (pkg/server/node-flags.ts): V8 reads them before any script runs, so a launcher that
// leaves them out runs a server whose young generation V8 sizes by its history (see
// docs/design.md, "The server's node flags"). The launchers: `npm start`, the image's
// entry point (which the chart's and deploy/'s Deployment run: they set args, never
// command, nor NODE_OPTIONS), the e2e harness and the bench's server hosts; and any
// other script under hack/ or e2e/ (.ts, .mjs, .js, .sh) that starts the server's entry
// point or a server host itself: every such call on its own (launch-calls.ts parses the
// sources, so a new bench script is checked too).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import { serverCommand } from '../e2e/harness.js';
import { SERVER_NODE_FLAGS, SERVER_MIN_SEMI_SPACE_MIB } from '../pkg/server/node-flags.js';
import { execArgvOf } from './bench/children.js';
import { launchesOf, launchesWithoutFlags } from './launch-calls.js';

// Tests run from the repository root, after the build.
const flags = SERVER_NODE_FLAGS.join(' ');

test('the flags fix the young generation at the size they name', () => {
  assert.ok(SERVER_NODE_FLAGS.includes(`--min-semi-space-size=${SERVER_MIN_SEMI_SPACE_MIB}`));
});

test('npm start runs node with the flags before the server', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  assert.match(pkg.scripts['start'] ?? '', new RegExp(`exec node ${flags} dist/cmd/apiserver/main\\.js$`));
});

test("the image's entry point runs node with the flags before the server", () => {
  const text = readFileSync('Dockerfile', 'utf8');
  const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(text);
  assert.ok(entry, 'an exec-form ENTRYPOINT');
  assert.deepEqual(JSON.parse(entry[1]!), [
    '/nodejs/bin/node',
    ...SERVER_NODE_FLAGS,
    '/app/dist/cmd/apiserver/main.js',
  ]);
});

interface Container {
  name: string;
  command?: unknown;
  env?: { name: string }[];
}

function serverContainer(docs: unknown[]): Container {
  const deployment = docs.find(
    (d): d is { kind: string; spec: { template: { spec: { containers: Container[] } } } } =>
      (d as { kind?: string } | null)?.kind === 'Deployment',
  );
  const c = deployment?.spec.template.spec.containers.find((x) => x.name === 'apiserver');
  assert.ok(c, 'the Deployment has the apiserver container');
  return c;
}

test("the chart's and deploy/'s Deployment run the image's entry point (args only, no NODE_OPTIONS)", () => {
  // deploy/ is the chart rendered with its default values (hack/chart/deploy.test.ts
  // fails when they drift); the template is checked for every other set of values.
  const c = serverContainer([
    YAML.parse(readFileSync('deploy/18-deployment-platform-apiserver.yaml', 'utf8')),
  ]);
  assert.equal(c.command, undefined, 'command would replace the entry point and its flags');
  assert.equal(c.env?.some((e) => e.name === 'NODE_OPTIONS') ?? false, false);
  const template = readFileSync('charts/platform-apiserver/templates/deployment.yaml', 'utf8');
  assert.doesNotMatch(template, /^\s*command:/m);
  assert.doesNotMatch(template, /NODE_OPTIONS/);
});

test('the e2e harness and the bench start the server with the flags', () => {
  const cmd = serverCommand();
  assert.deepEqual(cmd.slice(1, 1 + SERVER_NODE_FLAGS.length), [...SERVER_NODE_FLAGS]);
  const host = execArgvOf('server-host', { gc: true });
  assert.ok(
    SERVER_NODE_FLAGS.every((f) => host.includes(f)),
    host.join(' '),
  );
  // Only the server runs with them: the load generator keeps V8's own sizing.
  assert.equal(
    execArgvOf('load').some((f) => SERVER_NODE_FLAGS.includes(f)),
    false,
  );
});

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(?:[cm]?js|m?ts|sh)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

/** The server launches without the flags in one source, by line. */
function without(file: string, source: string): number[] {
  return launchesWithoutFlags(file, source, SERVER_NODE_FLAGS).map((c) => c.line);
}

test('the launcher check judges each call that starts the server, not the file', () => {
  // The two bench scripts the check missed before it read the sources, as they were.
  const spawned = `
    const main = join(repoRoot, 'dist', 'cmd', 'apiserver', 'main.js');
    const child = spawn(process.execPath, [main, '--secure-port', '0'], { cwd: repoRoot });`;
  const forked = `
    const file = fileURLToPath(new URL('./server-host.js', import.meta.url));
    this.proc = fork(file, [], { execArgv: ['--expose-gc'] });`;
  assert.deepEqual(without('a.ts', spawned), [3]);
  assert.deepEqual(without('a.ts', forked), [3]);
  assert.deepEqual(without('a.ts', spawned.replace('[main,', '[...SERVER_NODE_FLAGS, main,')), []);
  assert.deepEqual(without('a.ts', forked.replace("['--expose-gc']", "execArgvOf('server-host')")), []);
  // The flags given to one launch do not cover another in the same file (a whole-file
  // check passed this).
  const twice = `${spawned.replace('[main,', '[...SERVER_NODE_FLAGS, main,')}
    const again = execFileSync(process.execPath, [main, '--help'], { encoding: 'utf8' });`;
  assert.deepEqual(without('a.ts', twice), [4]);
  // exec*, execFile* and promisified ones are launches too.
  assert.deepEqual(without('a.ts', `await execFileAsync('node', ['dist/cmd/apiserver/main.js']);`), [1]);
  assert.deepEqual(without('a.ts', `exec(\`node dist/cmd/apiserver/main.js --secure-port 0\`);`), [1]);
  assert.deepEqual(without('a.ts', `const m = /main/.exec('dist/cmd/apiserver/main.js');`), [], 'not a launch');
  // A worker thread cannot be given V8's heap flags (per process): the server never runs in one.
  assert.deepEqual(
    without('a.mjs', `new Worker(new URL('../dist/cmd/apiserver/main.js', import.meta.url), { execArgv: [] });`),
    [1],
  );
  // A script that forks itself to run the server in process is a launcher too.
  const selfForked = `
    const running = await server.startServer(config);
    const proc = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: 'inherit' });`;
  assert.deepEqual(without('a.ts', selfForked), [3]);
  assert.deepEqual(
    without('a.ts', selfForked.replace('{ stdio', '{ execArgv: [...SERVER_NODE_FLAGS], stdio')),
    [],
  );
  // ...but not one that forks itself for something else.
  assert.deepEqual(without('a.ts', `fork(fileURLToPath(import.meta.url), ['--child']);`), []);
  // etcd3-server-host starts its server host with the flags: a script using it is no launcher.
  assert.deepEqual(without('a.ts', `await startEtcd3Host(opts); spawnSync('taskset', ['-p']);`), []);
  // A script that starts something else (etcd, kubectl) is no launcher of the server.
  assert.deepEqual(without('a.ts', `spawn('etcd', ['--data-dir', dir]);`), []);
  // A shell script: each command line that runs the server's entry point with node.
  const shell = [
    '#!/bin/sh',
    `exec node ${flags} dist/cmd/apiserver/main.js "$@"`,
    'node \\',
    '  dist/cmd/apiserver/main.js --secure-port 0 &',
    'node hack/test.mjs',
  ].join('\n');
  assert.deepEqual(without('a.sh', shell), [3]);
});

test('the launcher check reads each call in its own scope, whatever the import, and only where node reads flags', () => {
  // A fresh-eyes review found each of these passed the regular-expression reading.
  const main = `const main = join(repoRoot, 'dist', 'cmd', 'apiserver', 'main.js');`;
  // Two functions each declaring their own \`args\`: the second's has no flags.
  const twoScopes = `
    function a() {
      const args = [...SERVER_NODE_FLAGS, main];
      return spawn(process.execPath, args);
    }
    function b() {
      const args = [main, '--secure-port', '0'];
      return spawn(process.execPath, args);
    }
    ${main}`;
  assert.deepEqual(without('a.ts', twoScopes), [8]);
  // A block's own declaration shadows the file's.
  const shadowed = `
    const args = [...SERVER_NODE_FLAGS, main];
    if (quick) {
      const args = [main];
      spawn(process.execPath, args);
    }
    ${main}`;
  assert.deepEqual(without('a.ts', shadowed), [5]);
  // A var belongs to its function, wherever it is written.
  const hoisted = `
    function c() {
      if (quick) { var args = [main]; }
      spawn(process.execPath, args);
    }
    ${main}`;
  assert.deepEqual(without('a.ts', hoisted), [4]);
  // After the script, the flags are the script's arguments, not node's.
  assert.deepEqual(without('a.ts', `${main}\nspawn(process.execPath, [main, ...SERVER_NODE_FLAGS]);`), [2]);
  assert.deepEqual(without('a.ts', `exec(\`node dist/cmd/apiserver/main.js \${SERVER_NODE_FLAGS.join(' ')}\`);`), [1]);
  assert.deepEqual(without('a.ts', `exec(\`node \${SERVER_NODE_FLAGS.join(' ')} dist/cmd/apiserver/main.js\`);`), []);
  assert.deepEqual(without('a.ts', `fork('dist/cmd/apiserver/main.js', [...SERVER_NODE_FLAGS]);`), [1]);
  // What the script pushes onto a list before the call is on its command line, in order.
  const pushed = `
    const args = [...SERVER_NODE_FLAGS];
    args.push(main);
    spawn(process.execPath, args);
    const late = [main];
    spawn(process.execPath, late);
    late.unshift(...SERVER_NODE_FLAGS);
    const after = [main];
    after.push(...SERVER_NODE_FLAGS);
    spawn(process.execPath, after);
    const before = [main];
    before.unshift(...SERVER_NODE_FLAGS);
    spawn(process.execPath, before);
    ${main}`;
  assert.deepEqual(without('a.ts', pushed), [6, 10]);
  // A namespace, default or required child_process.
  assert.deepEqual(without('a.ts', `import * as cp from 'node:child_process';\n${main}\ncp.spawn(process.execPath, [main]);`), [3]);
  assert.deepEqual(without('a.mjs', `import cp from 'child_process';\n${main}\ncp.execFileSync(process.execPath, [main]);`), [3]);
  assert.deepEqual(without('a.js', `const cp = require('node:child_process');\ncp.fork('dist/cmd/apiserver/main.js');`), [2]);
  assert.deepEqual(without('a.js', `const { fork: start } = require('child_process');\nstart('dist/cmd/apiserver/main.js');`), [2]);
  assert.deepEqual(
    without('a.ts', `import * as cp from 'node:child_process';\nconst { spawn: run } = cp;\nrun('node', ['dist/cmd/apiserver/main.js']);`),
    [3],
  );
  assert.deepEqual(without('a.ts', `import * as cp from 'node:child_process';\ncp['execFile']('node', ['dist/cmd/apiserver/main.js']);`), [2]);
  // A renamed import, and one promisified under another name.
  assert.deepEqual(
    without('a.ts', `import { spawn as run } from 'node:child_process';\nrun(process.execPath, ['dist/cmd/apiserver/main.js']);`),
    [2],
  );
  assert.deepEqual(
    without('a.ts', `import { execFile } from 'node:child_process';\nconst go = promisify(execFile);\nawait go('node', ['dist/cmd/apiserver/main.js']);`),
    [3],
  );
  // ...but a method of another object by that name is no launch.
  assert.deepEqual(without('a.ts', `import { spawn as run } from 'node:child_process';\nchild.spawn('dist/cmd/apiserver/main.js');`), []);
  // The flags in the child's env reach no node: node reads them from its command line.
  const envOnly = `spawn(process.execPath, ['dist/cmd/apiserver/main.js'], { env: { ...process.env, NOTE: SERVER_NODE_FLAGS.join(' ') } });`;
  assert.deepEqual(without('a.ts', envOnly), [1]);
  const envDeclared = `const opts = { env: { FLAGS: SERVER_NODE_FLAGS.join(' ') } };\nspawn(process.execPath, ['dist/cmd/apiserver/main.js'], opts);`;
  assert.deepEqual(without('a.ts', envDeclared), [2]);
  // execArgv is fork's (and a worker's) option; spawn ignores it.
  assert.deepEqual(without('a.ts', `spawn(process.execPath, ['dist/cmd/apiserver/main.js'], { execArgv: [...SERVER_NODE_FLAGS] });`), [1]);
  assert.deepEqual(without('a.ts', `fork('dist/cmd/apiserver/main.js', [], { execArgv: [...SERVER_NODE_FLAGS] });`), []);
  const forkDeclared = `const opts = { stdio: 'inherit', execArgv: [...SERVER_NODE_FLAGS] };\nfork('dist/cmd/apiserver/main.js', [], opts);`;
  assert.deepEqual(without('a.ts', forkDeclared), []);
  // A shell line naming the entry runs it without the flags unless it is node with them:
  // npx tsx, the script as an executable and a node held in a variable all lack them.
  const shell = [
    'npx tsx cmd/apiserver/main.ts --secure-port 0 &',
    './dist/cmd/apiserver/main.js &',
    'NODE_BIN=node; $NODE_BIN dist/cmd/apiserver/main.js',
    `/usr/local/bin/node ${flags} dist/cmd/apiserver/main.js &`,
    `node --inspect ${flags} dist/cmd/apiserver/main.js`,
    `node dist/cmd/apiserver/main.js ${flags}`,
  ].join('\n');
  assert.deepEqual(without('a.sh', shell), [1, 2, 3, 6]);
});

test('every script under hack/ and e2e/ that starts the server gives it the flags', () => {
  // This test and the checker show launches in their examples and comments.
  const own = new Set([join('hack', 'launchers.test.ts'), join('hack', 'launch-calls.ts')]);
  const scripts = [...sourcesUnder('hack'), ...sourcesUnder('e2e')].filter((f) => !own.has(f));
  const launchers = new Set<string>();
  const missing: string[] = [];
  for (const file of scripts) {
    const source = readFileSync(file, 'utf8');
    for (const call of launchesOf(file, source, SERVER_NODE_FLAGS)) {
      if (!call.startsServer) continue;
      launchers.add(file);
      if (call.worker || !call.carriesFlags) missing.push(`${file}:${call.line}: ${call.text.slice(0, 120)}`);
    }
  }
  // The check reads something: the harness and the bench's launchers are among them.
  for (const known of [
    join('e2e', 'harness.ts'),
    join('hack', 'bench', 'hostcluster-lazy-load.ts'),
    join('hack', 'bench', 'create-path.ts'),
  ]) {
    assert.ok(launchers.has(known), `${known} not found among the launchers: ${[...launchers].join(', ')}`);
  }
  assert.deepEqual(missing, []);
});
