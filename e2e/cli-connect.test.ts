// `platform connect <virtual cluster> --project <project>`: the real binary against
// a started server whose host cluster is the in-process test double. The kube
// config context lands in the user's kube config beside what was there (byte for
// byte), the current context switches unless told not to, --print only prints,
// --client-cert brings a certificate signed through the host's CSR API, and the
// result is usable: client-node reads the right server, CA and credentials, the
// token authenticates to the platform, and kubectl reaches the double (standing
// in for the virtual cluster) with the certificate.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { KubeHostCluster } from '../pkg/hostcluster/index.js';
import { HostClusterDouble } from '../pkg/hostcluster/testing/index.js';
import { apiRequest } from './https-client.js';
import { backends, GROUP_VERSION, kubectlBinary, kubectlWhoami, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { runCommand } from './commands.js';
import { cliRunner, oneLineError } from './cli-runner.js';
import type { CliRunner } from './cli-runner.js';

const TEST = { timeout: 120_000 };
const INGRESS_SUFFIX = 'vc.example.test';
const VC_NAMESPACE = 'vc-demo';

// Someone's kube config before connecting: two contexts of their own, one with a
// token-file only their machine has, and a comment. None of it may change.
const EXISTING = `# my clusters
apiVersion: v1
kind: Config
clusters:
  - name: kind-local
    cluster:
      server: https://127.0.0.1:6443
      insecure-skip-tls-verify: true
  - name: prod
    cluster:
      server: https://prod.example.com
users:
  - name: kind-admin
    user:
      token: kind-token
  - name: prod-sre
    user:
      tokenFile: /nowhere/prod-token
contexts:
  - name: kind
    context:
      cluster: kind-local
      user: kind-admin
      namespace: default
  - name: prod
    context:
      cluster: prod
      user: prod-sre
current-context: kind
`;

interface KubeConfigDoc {
  'current-context'?: string;
  clusters?: Array<{ name: string; cluster: Record<string, unknown> }>;
  users?: Array<{ name: string; user: Record<string, unknown> }>;
  contexts?: Array<{ name: string; context: Record<string, unknown> }>;
}

function entry<T extends { name: string }>(list: T[] | undefined, name: string): T | undefined {
  return list?.find((e) => e.name === name);
}

/** A virtual cluster instance with its ingress access point on, running in VC_NAMESPACE on the host. */
function instance(name: string): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'VirtualClusterInstance',
    metadata: { name },
    spec: {
      clusterRef: { namespace: VC_NAMESPACE, virtualCluster: name },
      template: { accessPoint: { ingress: { enabled: true } } },
    },
  };
}

interface Platform {
  server: TestServer;
  cli: CliRunner;
  caFile: string;
}

/**
 * A server on `host` (the double) with --ingress-suffix and `args`, instances
 * created at namespace/name, and a CLI logged in as the admin.
 */
async function startPlatform(
  host: HostClusterDouble,
  instances: ReadonlyArray<readonly [string, string]>,
  args: readonly string[] = [],
): Promise<Platform> {
  const cli = cliRunner();
  const hostKubeconfig = host.writeKubeconfig(join(cli.home, 'host.kubeconfig'));
  let server: TestServer | undefined;
  try {
    server = await startServer({
      backend: backends()[0] ?? 'sqlite',
      args: ['--host-kubeconfig', hostKubeconfig, '--ingress-suffix', INGRESS_SUFFIX, ...args],
    });
    for (const [namespace, name] of instances) {
      const r = await server.api(
        'POST',
        `/apis/${GROUP_VERSION}/namespaces/${namespace}/virtualclusterinstances`,
        instance(name),
      );
      assert.equal(r.status, 201, r.text);
    }
    const caFile = join(cli.home, 'platform-ca.pem');
    writeFileSync(caFile, server.ca);
    const platformHost = server.url.replace(/^https:\/\//, '');
    await cli.ok(['login', platformHost, '--access-key', server.token, '--ca-file', caFile]);
    return { server, cli, caFile };
  } catch (err) {
    cli.cleanup();
    await server?.stop();
    throw err;
  }
}

describe('platform connect', () => {
  let host: HostClusterDouble;
  let platform: Platform;
  let cli: CliRunner;
  let kubeconfig: string;

  const readDoc = (): KubeConfigDoc => parseYaml(readFileSync(kubeconfig, 'utf8')) as KubeConfigDoc;

  before(async () => {
    host = await HostClusterDouble.start();
    // The virtual clusters' CA: the double's own serving CA, so the double can stand
    // in for the virtual cluster's endpoint and kubectl can verify it.
    const kc = new KubeConfig();
    kc.loadFromString(host.kubeconfig());
    for (const name of ['dev', 'api']) {
      await new KubeHostCluster(kc).createSecret({
        metadata: { name: `${name}-certs`, namespace: VC_NAMESPACE },
        data: { 'ca.crt': Buffer.from(host.serverCa.certPem) },
      });
    }
    platform = await startPlatform(host, [
      ['p-demo', 'dev'],
      ['p-demo', 'api'],
      ['p-other', 'dev'],
    ]);
    cli = platform.cli;
    kubeconfig = join(cli.home, '.kube', 'config');
    mkdirSync(join(cli.home, '.kube'));
    writeFileSync(kubeconfig, EXISTING, { mode: 0o644 });
  });

  after(async () => {
    platform?.cli.cleanup();
    await platform?.server.stop();
    await host?.stop();
  });

  it(
    'writes a context into the existing kube config, leaves the others as they were, and switches to it',
    TEST,
    async () => {
      const r = await cli.ok(['connect', 'dev', '--project', 'demo']);
      assert.match(r.stdout, /context "platform_dev_demo" in .*\.kube\/config, now the current context/);

      const text = readFileSync(kubeconfig, 'utf8');
      assert.ok(text.startsWith('# my clusters\n'), 'the comment is kept');
      const doc = readDoc();
      const before = parseYaml(EXISTING) as KubeConfigDoc;
      for (const list of ['clusters', 'users', 'contexts'] as const) {
        for (const old of before[list] ?? []) {
          assert.deepEqual(
            entry<{ name: string }>(doc[list], old.name),
            old,
            `${list} ${old.name} unchanged`,
          );
        }
        assert.equal(doc[list]?.length, (before[list]?.length ?? 0) + 1, `one ${list} entry added`);
      }
      assert.equal(doc['current-context'], 'platform_dev_demo');
      assert.equal(statSync(kubeconfig).mode & 0o777, 0o600, 'a file with credentials is 0600');

      // client-node reads it: the ingress server, the virtual cluster's CA, a token.
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      assert.equal(kc.getCurrentContext(), 'platform_dev_demo');
      assert.equal(kc.getCurrentCluster()?.server, `https://dev-demo.${INGRESS_SUFFIX}`);
      const caData = kc.getCurrentCluster()?.caData ?? '';
      assert.equal(Buffer.from(caData, 'base64').toString('utf8').trim(), host.serverCa.certPem.trim());
      const token = kc.getCurrentUser()?.token;
      assert.ok(token, 'the user entry carries a platform token');

      // The token is a platform credential of the caller: the platform itself says who it is.
      const who = await apiRequest(
        { baseUrl: platform.server.apiBase, ca: platform.server.ca, token },
        'POST',
        `/apis/${GROUP_VERSION}/selves`,
        { apiVersion: GROUP_VERSION, kind: 'Self', spec: {} },
      );
      assert.equal(who.status, 201, who.text);
      assert.equal(who.json<{ status: { user?: { name: string } } }>().status.user?.name, 'admin');
    },
  );

  it('--no-switch-context adds the context and keeps the current one', TEST, async () => {
    await cli.ok(['connect', 'api', '--project', 'demo', '--no-switch-context']);
    const doc = readDoc();
    assert.equal(doc['current-context'], 'platform_dev_demo');
    assert.deepEqual(entry(doc.contexts, 'platform_api_demo')?.context, {
      cluster: 'platform_api_demo',
      user: 'platform_api_demo',
    });
    assert.equal(
      entry(doc.clusters, 'platform_api_demo')?.cluster['server'],
      `https://api-demo.${INGRESS_SUFFIX}`,
    );
  });

  it('--print writes the kube config to stdout and leaves the file alone', TEST, async () => {
    const before = readFileSync(kubeconfig, 'utf8');
    const r = await cli.ok(['connect', 'dev', '--project', 'demo', '--print']);
    assert.equal(readFileSync(kubeconfig, 'utf8'), before);
    const kc = new KubeConfig();
    kc.loadFromString(r.stdout);
    assert.equal(kc.getCurrentCluster()?.server, `https://dev-demo.${INGRESS_SUFFIX}`);
    assert.ok(kc.getCurrentUser()?.token);
  });

  it(
    '--client-cert puts a certificate signed through the host CSR API in the user entry, and kubectl uses it',
    TEST,
    async () => {
      const csrsBefore = host.certificateSigningRequests().length;
      await cli.ok([
        'connect',
        'dev',
        '--project',
        'demo',
        '--client-cert',
        '--certificate-ttl',
        '2h',
        // The double is the virtual cluster's endpoint here.
        '--server',
        host.url,
      ]);
      const doc = readDoc();
      assert.equal(doc['current-context'], 'platform_dev_demo');
      const user = entry(doc.users, 'platform_dev_demo')?.user ?? {};
      assert.equal(user['token'], undefined, 'the token of the earlier connect is replaced');
      const certData = user['client-certificate-data'];
      assert.equal(typeof certData, 'string');
      assert.equal(typeof user['client-key-data'], 'string');
      const cert = new X509Certificate(Buffer.from(String(certData), 'base64'));
      assert.match(cert.subject, /CN=admin/);
      assert.ok(
        cert.verify(new X509Certificate(host.clientCa.certPem).publicKey),
        'signed by the host signer',
      );
      const lifetime = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000;
      // The signer backdates by five minutes, as kube-controller-manager does.
      assert.ok(lifetime >= 7200 && lifetime <= 7200 + 600, `lifetime ${lifetime}s`);
      assert.equal(host.certificateSigningRequests().length, csrsBefore, 'the request is cleaned up');

      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      assert.equal(kc.getCurrentCluster()?.server, host.url);

      // kubectl with the written kube config, as the user would run it: the double
      // (as the virtual cluster) authenticates the certificate and says who it is.
      const reviewFile = join(cli.home, 'selfsubjectreview.json');
      writeFileSync(
        reviewFile,
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      );
      const whoami = await runCommand(
        kubectlBinary(),
        ['create', '--raw', '/apis/authentication.k8s.io/v1/selfsubjectreviews', '-f', reviewFile],
        { env: { PATH: process.env['PATH'] ?? '', HOME: cli.home, KUBECONFIG: kubeconfig } },
      );
      assert.equal(whoami.code, 0, whoami.stderr);
      const review = JSON.parse(whoami.stdout) as { status: { userInfo: { username: string } } };
      assert.equal(review.status.userInfo.username, 'admin');
    },
  );

  it(
    'says when the project or the instance is not found, or which projects share the name',
    TEST,
    async () => {
      const before = readFileSync(kubeconfig, 'utf8');
      const noProject = await cli.run(['connect', 'dev', '--project', 'nope']);
      assert.equal(noProject.code, 1);
      assert.match(oneLineError(noProject), /project "nope" not found.*\(namespace p-nope\)/);

      const noInstance = await cli.run(['connect', 'nope', '--project', 'demo']);
      assert.equal(noInstance.code, 1);
      assert.match(
        oneLineError(noInstance),
        /virtual cluster "nope" not found in project "demo"; it has: api, dev/,
      );

      const several = await cli.run(['connect', 'dev']);
      assert.equal(several.code, 1);
      assert.match(
        oneLineError(several),
        /several virtual clusters are named "dev" \(in projects demo, other\): choose one with --project/,
      );
      // Without --project a unique name is enough.
      const unique = await cli.ok(['connect', 'api', '--print']);
      assert.match(unique.stdout, /api-demo\.vc\.example\.test/);
      assert.equal(readFileSync(kubeconfig, 'utf8'), before, 'failures write nothing');
    },
  );

  it(
    'a standalone server with --host-kubeconfig answers kubectl auth can-i and whoami itself',
    TEST,
    async () => {
      const { server } = platform;
      const canI = await server.kubectl(['auth', 'can-i', 'create', 'teams']);
      assert.equal(canI.code, 0, canI.stderr);
      assert.equal(canI.stdout.trim(), 'yes');
      const call = await kubectlWhoami([]);
      const whoami = await server.kubectl(call.args, call.options);
      assert.equal(whoami.code, 0, whoami.stderr);
      const review = JSON.parse(whoami.stdout) as { status: { userInfo: { username: string } } };
      assert.equal(review.status.userInfo.username, 'admin');
      const rules = await server.api('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectRulesReview',
        spec: { namespace: 'p-demo' },
      });
      assert.equal(rules.status, 201, rules.text);
      const groups = await server.kubectl([
        'api-resources',
        '--api-group',
        'authorization.k8s.io',
        '-o',
        'name',
      ]);
      assert.deepEqual(groups.stdout.trim().split('\n').sort(), [
        'selfsubjectaccessreviews.authorization.k8s.io',
        'selfsubjectrulesreviews.authorization.k8s.io',
      ]);
    },
  );

  it('KUBECONFIG with several files: writes the first that exists, as kubectl does', TEST, async () => {
    const missing = join(cli.home, 'missing.kubeconfig');
    const second = join(cli.home, 'second.kubeconfig');
    const third = join(cli.home, 'third.kubeconfig');
    writeFileSync(second, EXISTING);
    writeFileSync(third, EXISTING);
    await cli.ok(['connect', 'dev', '--project', 'demo'], {
      env: { KUBECONFIG: [missing, second, third].join(':') },
    });
    const doc = parseYaml(readFileSync(second, 'utf8')) as KubeConfigDoc;
    assert.equal(doc['current-context'], 'platform_dev_demo');
    assert.ok(entry(doc.contexts, 'kind'), 'the file keeps its own contexts');
    assert.equal(readFileSync(third, 'utf8'), EXISTING, 'the other file is untouched');
    assert.equal(statSync(missing, { throwIfNoEntry: false }), undefined, 'no file is created');

    // kubectl sees the new context as the current one across the merged files.
    const view = await runCommand(kubectlBinary(), ['config', 'current-context'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: cli.home,
        KUBECONFIG: [missing, second, third].join(':'),
      },
    });
    assert.equal(view.stdout.trim(), 'platform_dev_demo', view.stderr);
  });
});

describe('platform connect with another project namespace prefix', () => {
  let host: HostClusterDouble;
  let platform: Platform | undefined;

  before(async () => {
    host = await HostClusterDouble.start();
    const kc = new KubeConfig();
    kc.loadFromString(host.kubeconfig());
    await new KubeHostCluster(kc).createSecret({
      metadata: { name: 'web-certs', namespace: VC_NAMESPACE },
      data: { 'ca.crt': Buffer.from(host.serverCa.certPem) },
    });
    platform = await startPlatform(
      host,
      [['project-shop', 'web']],
      ['--project-namespace-prefix', 'project-'],
    );
  });

  after(async () => {
    platform?.cli.cleanup();
    await platform?.server.stop();
    await host?.stop();
  });

  it('finds the instance in the namespace the server names (selves), not in p-<project>', TEST, async () => {
    const cli = platform?.cli ?? assert.fail('no platform');
    const r = await cli.ok(['connect', 'web', '--project', 'shop', '--print']);
    const kc = new KubeConfig();
    kc.loadFromString(r.stdout);
    assert.equal(kc.getCurrentCluster()?.server, `https://web-shop.${INGRESS_SUFFIX}`);
    const missing = await cli.run(['connect', 'web', '--project', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(oneLineError(missing), /\(namespace project-nope\)/);
  });
});
