// Every way the server is started carries the server's node flags
// (pkg/server/node-flags.ts): V8 reads them before any script runs, so a launcher that
// leaves them out runs a server whose young generation V8 sizes by its history (see
// docs/design.md, "The server's node flags"). The launchers: `npm start`, the image's
// entry point (which the chart's and deploy/'s Deployment run: they set args, never
// command, nor NODE_OPTIONS), the e2e harness and the bench's server hosts; and any
// other script under hack/ or e2e/ that starts the server's entry point or a server host
// itself (found by reading the sources, so a new bench script is checked too).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import { serverCommand } from '../e2e/harness.js';
import { SERVER_NODE_FLAGS, SERVER_MIN_SEMI_SPACE_MIB } from '../pkg/server/node-flags.js';
import { execArgvOf } from './bench/children.js';

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

/** A call that starts a process. */
const LAUNCH = /\b(?:spawn|spawnSync|fork|execFile|execFileSync)\(/;
/**
 * The server's entry point (as a path or path.join's pieces), the bench's server host
 * (not etcd3-server-host, a module that starts one with the flags itself), or a script
 * that forks itself and runs the server in that child (`startServer` of pkg/server).
 */
const SERVER_SCRIPT =
  /cmd['"\s,/]+apiserver['"\s,/]+main\b|(?<!etcd3-)server-host\b|fork\(fileURLToPath\(import\.meta\.url\)[^]*\bserver\.startServer\(|\bserver\.startServer\([^]*fork\(fileURLToPath\(import\.meta\.url\)/;
/**
 * What puts the flags on a child's command line: the flags themselves, or the helpers
 * that add them (children.ts's execArgvOf and Child.start, the harness's serverCommand).
 */
const CARRIES_FLAGS = /\bSERVER_NODE_FLAGS\b|\bexecArgvOf\(|\bChild\.start\(|\bserverCommand\(/;

/** Whether a script's source starts the server (or a server host) with nothing that gives it the flags. */
function startsServerWithoutFlags(source: string): boolean {
  return LAUNCH.test(source) && SERVER_SCRIPT.test(source) && !CARRIES_FLAGS.test(source);
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

test('the launcher check flags a script that spawns the server without the flags', () => {
  // The two bench scripts the check missed before it read the sources, as they were.
  const spawned = `
    const main = join(repoRoot, 'dist', 'cmd', 'apiserver', 'main.js');
    const child = spawn(process.execPath, [main, '--secure-port', '0'], { cwd: repoRoot });`;
  const forked = `
    const self = fileURLToPath(new URL('./server-host.js', import.meta.url));
    this.proc = fork(file, [], { execArgv: ['--expose-gc'] });`;
  assert.equal(startsServerWithoutFlags(spawned), true);
  assert.equal(startsServerWithoutFlags(forked), true);
  assert.equal(startsServerWithoutFlags(spawned.replace('[main,', '[...SERVER_NODE_FLAGS, main,')), false);
  assert.equal(
    startsServerWithoutFlags(forked.replace("['--expose-gc']", "execArgvOf('server-host')")),
    false,
  );
  // A script that forks itself to run the server in process is a launcher too (it was missed).
  const selfForked = `
    const running = await server.startServer(config);
    const proc = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: 'inherit' });`;
  assert.equal(startsServerWithoutFlags(selfForked), true);
  assert.equal(
    startsServerWithoutFlags(selfForked.replace('{ stdio', '{ execArgv: [...SERVER_NODE_FLAGS], stdio')),
    false,
  );
  // etcd3-server-host starts its server host with the flags: a script using it is no launcher.
  assert.equal(startsServerWithoutFlags(`await startEtcd3Host(opts); spawnSync('taskset', ['-p']);`), false);
  // A script that starts something else (etcd, kubectl) is no launcher of the server.
  assert.equal(startsServerWithoutFlags(`spawn('etcd', ['--data-dir', dir]);`), false);
});

test('every script under hack/ and e2e/ that starts the server gives it the flags', () => {
  const self = join('hack', 'launchers.test.ts');
  const scripts = [...sourcesUnder('hack'), ...sourcesUnder('e2e')].filter((f) => f !== self);
  const launchers = scripts.filter((f) => {
    const source = readFileSync(f, 'utf8');
    return LAUNCH.test(source) && SERVER_SCRIPT.test(source);
  });
  // The check reads something: the harness and the bench's launchers are among them.
  assert.ok(launchers.includes(join('e2e', 'harness.ts')), launchers.join(', '));
  assert.ok(launchers.includes(join('hack', 'bench', 'hostcluster-lazy-load.ts')), launchers.join(', '));
  const without = launchers.filter((f) => startsServerWithoutFlags(readFileSync(f, 'utf8')));
  assert.deepEqual(without, []);
});
