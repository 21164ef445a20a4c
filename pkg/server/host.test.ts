// A standalone server never loads @kubernetes/client-node (about a second of CPU
// at every start): the library comes in only when a host cluster is configured.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/** A module-resolution hook that fails any import of client-node. */
const REFUSE_CLIENT_NODE = `export async function resolve(specifier, context, next) {
  if (specifier.includes('@kubernetes/client-node')) throw new Error('@kubernetes/client-node was loaded');
  return next(specifier, context);
}`;

/** Runs `body` (an ES module) in a fresh node whose imports of client-node fail. */
function runRefusingClientNode(body: string): { status: number | null; stdout: string; stderr: string } {
  const register = `import { register } from 'node:module'; register(${JSON.stringify(
    `data:text/javascript,${encodeURIComponent(REFUSE_CLIENT_NODE)}`,
  )});`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', body],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const serverModule = JSON.stringify(new URL('./index.js', import.meta.url).href);
const loadModule = JSON.stringify(new URL('../hostcluster/load.js', import.meta.url).href);

test('the server, without a host cluster, loads no @kubernetes/client-node', () => {
  const r = runRefusingClientNode(`
    await import(${serverModule});
    const { loadHostCluster } = await import(${loadModule});
    const host = await loadHostCluster({ env: {} });
    process.stdout.write(host === undefined ? 'no host' : 'host');
  `);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'no host');
});

test('with a host kube config it does load it (the hook above would notice)', () => {
  const r = runRefusingClientNode(`
    const { loadHostCluster } = await import(${loadModule});
    await loadHostCluster({ kubeconfigPath: '/nonexistent/kubeconfig' });
  `);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /@kubernetes\/client-node was loaded/);
});
