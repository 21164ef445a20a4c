import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { CliError } from './errors.js';
import { tempDirPerTest } from './testing/temp-dir.js';
import {
  extractCurrentContext,
  kubeconfigPath,
  mergeIntoKubeConfigFile,
  mergeKubeConfigText,
  type NamedEntries,
} from './kubeconfig-merge.js';

// What the platform's kubeconfig subresource answers: one context, its own names.
const FROM_PLATFORM = `apiVersion: v1
kind: Config
clusters:
  - name: dev-demo
    cluster:
      server: https://dev-demo.vc.example.com
      certificate-authority-data: Q0EgREFUQQ==
users:
  - name: dev-demo
    user:
      token: platform-token-1
contexts:
  - name: dev-demo
    context:
      cluster: dev-demo
      user: dev-demo
      namespace: apps
current-context: dev-demo
`;

const EXISTING = `# mine
apiVersion: v1
kind: Config
clusters:
  - name: kind
    cluster:
      server: https://127.0.0.1:6443
users:
  - name: kind
    user:
      tokenFile: /only/on/my/laptop
contexts:
  - name: kind
    context:
      cluster: kind
      user: kind
current-context: kind
`;

interface Doc {
  'current-context'?: string;
  clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
  users: Array<{ name: string; user: Record<string, unknown> }>;
  contexts: Array<{ name: string; context: Record<string, unknown> }>;
}

const CONTEXT = 'platform_dev_demo';
const entries = (text = FROM_PLATFORM): NamedEntries => extractCurrentContext(text, CONTEXT);

describe('extractCurrentContext', () => {
  it('takes the current context with its cluster and user, all renamed to one name', () => {
    const e = entries();
    assert.deepEqual(e.cluster, {
      name: CONTEXT,
      cluster: { server: 'https://dev-demo.vc.example.com', 'certificate-authority-data': 'Q0EgREFUQQ==' },
    });
    assert.deepEqual(e.user, { name: CONTEXT, user: { token: 'platform-token-1' } });
    assert.deepEqual(e.context, {
      name: CONTEXT,
      context: { cluster: CONTEXT, user: CONTEXT, namespace: 'apps' },
    });
  });

  it('refuses a document without a current context or that is not a kube config', () => {
    assert.throws(
      () => extractCurrentContext(FROM_PLATFORM.replace('current-context: dev-demo\n', ''), CONTEXT),
      (err: unknown) => err instanceof CliError && /without a current context/.test(err.message),
    );
    assert.throws(() => extractCurrentContext('clusters: 7\n', CONTEXT), CliError);
  });
});

describe('mergeKubeConfigText', () => {
  it('keeps every other cluster, user and context byte for byte, with comments', () => {
    const merged = mergeKubeConfigText(EXISTING, entries(), true);
    assert.ok(merged.startsWith('# mine\n'));
    assert.ok(merged.includes('      tokenFile: /only/on/my/laptop\n'));
    const doc = parse(merged) as Doc;
    const old = parse(EXISTING) as Doc;
    assert.deepEqual(doc.clusters[0], old.clusters[0]);
    assert.deepEqual(doc.users[0], old.users[0]);
    assert.deepEqual(doc.contexts[0], old.contexts[0]);
    assert.deepEqual(
      doc.contexts.map((c) => c.name),
      ['kind', CONTEXT],
    );
    assert.equal(doc['current-context'], CONTEXT);
  });

  it('replaces entries of the same name instead of adding a second one', () => {
    const once = mergeKubeConfigText(EXISTING, entries(), true);
    const again = mergeKubeConfigText(
      once,
      entries(FROM_PLATFORM.replace('platform-token-1', 'platform-token-2')),
      true,
    );
    const doc = parse(again) as Doc;
    assert.equal(doc.users.filter((u) => u.name === CONTEXT).length, 1);
    assert.deepEqual(doc.users.find((u) => u.name === CONTEXT)?.user, { token: 'platform-token-2' });
    assert.equal(doc.clusters.length, 2);
    assert.equal(doc.contexts.length, 2);
  });

  it('switches the current context only when asked, or when there was none', () => {
    assert.equal((parse(mergeKubeConfigText(EXISTING, entries(), false)) as Doc)['current-context'], 'kind');
    const fresh = parse(mergeKubeConfigText('', entries(), false)) as Doc & {
      apiVersion: string;
      kind: string;
    };
    assert.equal(fresh['current-context'], CONTEXT);
    assert.equal(fresh.apiVersion, 'v1');
    assert.equal(fresh.kind, 'Config');
  });

  it('refuses an existing file that is not a YAML mapping', () => {
    assert.throws(() => mergeKubeConfigText('- a\n- b\n', entries(), true), CliError);
  });
});

describe('mergeIntoKubeConfigFile', () => {
  const tempDir = tempDirPerTest('kubeconfig-merge-');

  it('creates the file and its directories when missing, mode 0600, loadable by client-node', () => {
    const dir = tempDir();
    const path = join(dir, 'a', 'b', 'config');
    mergeIntoKubeConfigFile(path, entries(), true);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    assert.equal(kc.getCurrentContext(), CONTEXT);
    assert.equal(kc.getCurrentCluster()?.server, 'https://dev-demo.vc.example.com');
    assert.equal(kc.getCurrentUser()?.token, 'platform-token-1');
  });

  it('narrows an existing readable file to 0600 and leaves no temporary file behind', () => {
    const dir = tempDir();
    const path = join(dir, 'config');
    writeFileSync(path, EXISTING, { mode: 0o644 });
    mergeIntoKubeConfigFile(path, entries(), true);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['config']);
    assert.ok(readFileSync(path, 'utf8').includes('tokenFile: /only/on/my/laptop'));
  });

  it('refuses to touch a file that is not a kube config, and says which', () => {
    const dir = tempDir();
    const path = join(dir, 'config');
    writeFileSync(path, 'clusters: nope\n');
    assert.throws(
      () => mergeIntoKubeConfigFile(path, entries(), true),
      (err: unknown) => err instanceof CliError && err.message.includes(path),
    );
    assert.equal(readFileSync(path, 'utf8'), 'clusters: nope\n');
  });
});

describe('kubeconfigPath', () => {
  const tempDir = tempDirPerTest('kubeconfig-path-');

  it('--kubeconfig wins, then KUBECONFIG, then ~/.kube/config', () => {
    const dir = tempDir();
    const home = join(dir, 'home');
    assert.equal(kubeconfigPath(undefined, {}, home), join(home, '.kube', 'config'));
    assert.equal(kubeconfigPath(undefined, { KUBECONFIG: '' }, home), join(home, '.kube', 'config'));
    assert.equal(kubeconfigPath(undefined, { KUBECONFIG: '/x/one' }, home), '/x/one');
    assert.equal(kubeconfigPath('/flag', { KUBECONFIG: '/x/one' }, home), '/flag');
  });

  it('with several KUBECONFIG files: the first that exists, else the last (client-go GetDefaultFilename)', () => {
    const dir = tempDir();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => join(dir, n)) as [string, string, string];
    const env = { KUBECONFIG: [a, b, c].join(':') };
    assert.equal(kubeconfigPath(undefined, env, dir), c, 'none exists: the last');
    writeFileSync(c, '');
    writeFileSync(b, '');
    assert.equal(kubeconfigPath(undefined, env, dir), b);
    writeFileSync(a, '');
    assert.equal(kubeconfigPath(undefined, env, dir), a);
    assert.ok(existsSync(a));
  });
});
