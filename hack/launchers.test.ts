// Every way the server is started carries the server's node flags
// (pkg/server/node-flags.ts): V8 reads them before any script runs, so a launcher that
// leaves them out runs a server whose young generation V8 sizes by its history (see
// docs/design.md, "The server's node flags"). The launchers: `npm start`, the image's
// entry point (which the chart's and deploy/'s Deployment run: they set args, never
// command, nor NODE_OPTIONS), the e2e harness and the bench's server hosts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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
