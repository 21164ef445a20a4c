// Connecting virtual clusters to the platform with the `platform vcluster`
// commands: the real binary against a started server, with the host cluster's
// test double (real HTTPS, client-certificate auth) as the host the secrets, Roles
// and RoleBindings are written to and read from. Each lookup step, shared mode
// with one secret for two virtual clusters (and its rotation), dedicated mode
// (revoking one key breaks only its virtual cluster), the missing-role error, and
// the RBAC objects.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { HostClusterDouble } from '../pkg/hostcluster/testing/index.js';
import { backends, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { cliRunner, oneLineError } from './cli-runner.js';
import type { CliRunner } from './cli-runner.js';

const TEST = { timeout: 120_000 };

interface CheckSummary {
  source: string;
  lookedAt: string[];
  host: string;
  project: string;
  user?: string;
  accessKey?: string;
  rbac?: { role: string };
}

describe('platform vcluster', () => {
  let server: TestServer;
  let host: HostClusterDouble;
  let cli: CliRunner;
  let hostArgs: string[];
  let platformHost: string;
  let caFile: string;

  const config = (name: string, yaml: string): string => {
    const path = join(cli.home, `${name}.yaml`);
    writeFileSync(path, yaml);
    return path;
  };
  let shared: string;
  let dedicated: string;

  before(async () => {
    server = await startServer({ backend: backends()[0] ?? 'sqlite' });
    host = await HostClusterDouble.start();
    cli = cliRunner();
    hostArgs = [
      '--kubeconfig',
      host.writeKubeconfig(join(cli.home, 'host.kubeconfig'), 'cluster-admin', ['system:masters']),
    ];
    caFile = join(cli.home, 'platform-ca.pem');
    writeFileSync(caFile, server.ca);
    platformHost = server.url.replace(/^https:\/\//, '');
    await cli.ok(['login', platformHost, '--access-key', server.token, '--ca-file', caFile]);
    shared = config('shared', 'external:\n  platform:\n    apiKey:\n      namespace: vc-platform\n');
    dedicated = config('dedicated', 'external:\n  platform: {}\n');
  });

  after(async () => {
    cli?.cleanup();
    await host?.stop();
    await server?.stop();
  });

  async function check(
    file: string,
    name: string,
    namespace: string,
    extra: string[] = [],
    env?: Record<string, string>,
  ) {
    const r = await cli.run(
      [
        'vcluster',
        'check',
        file,
        '--name',
        name,
        '--namespace',
        namespace,
        '-o',
        'json',
        ...hostArgs,
        ...extra,
      ],
      env ? { env } : {},
    );
    return { r, summary: r.code === 0 ? (JSON.parse(r.stdout) as CheckSummary) : undefined };
  }

  describe('shared mode', () => {
    it(
      'one secret serves two virtual clusters in different namespaces, each with its own RBAC',
      TEST,
      async () => {
        const r = await cli.ok([
          'vcluster',
          'create-secret',
          '--namespace',
          'vc-platform',
          '--vcluster',
          'team-a/dev',
          '--vcluster',
          'team-b/dev',
          ...hostArgs,
        ]);
        assert.match(r.stdout, /^secret vc-platform\/vc-platform-api-key created$/m);

        const secret = host.secretData('vc-platform', 'vc-platform-api-key');
        assert.ok(secret);
        assert.equal(secret['host'], platformHost, 'the host is stored without its scheme');
        assert.ok(secret['accessKey']);
        assert.equal(secret['certificateAuthorityData'], server.ca);

        const roles = [
          /vc-platform-key-dev-team-a-[0-9a-f]{8}/,
          /vc-platform-key-dev-team-b-[0-9a-f]{8}/,
        ].map((re) => re.exec(r.stdout)?.[0] ?? assert.fail(r.stdout));
        assert.notEqual(roles[0], roles[1]);
        for (const [i, ns] of ['team-a', 'team-b'].entries()) {
          const name = roles[i] ?? '';
          const role = host.object('roles', 'vc-platform', name);
          assert.deepEqual(role?.['rules'], [
            {
              apiGroups: [''],
              resources: ['secrets'],
              resourceNames: ['vc-platform-api-key'],
              verbs: ['get'],
            },
          ]);
          const binding = host.object('rolebindings', 'vc-platform', name);
          assert.deepEqual(binding?.['subjects'], [
            { kind: 'ServiceAccount', name: 'vc-dev', namespace: ns },
          ]);
          assert.deepEqual(binding?.['roleRef'], {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name,
          });
        }

        for (const ns of ['team-a', 'team-b']) {
          const { r: c, summary } = await check(shared, 'dev', ns, ['--project', 'proj-' + ns]);
          assert.equal(c.code, 0, c.stderr);
          assert.equal(summary?.source, 'secret vc-platform/vc-platform-api-key (external.platform.apiKey)');
          assert.equal(summary?.user, 'admin');
          assert.equal(summary?.rbac?.role, `vc-platform/${ns === 'team-a' ? roles[0] : roles[1]}`);
        }
      },
    );

    it('rotating the secret changes what both virtual clusters resolve', TEST, async () => {
      const before = await Promise.all(
        ['team-a', 'team-b'].map((ns) => check(shared, 'dev', ns, ['--project', 'p'])),
      );
      const oldKey = before[0]?.summary?.accessKey;
      assert.ok(oldKey);
      assert.equal(before[1]?.summary?.accessKey, oldKey);
      const r = await cli.ok(['vcluster', 'create-secret', '--namespace', 'vc-platform', ...hostArgs]);
      assert.match(r.stdout, /^secret vc-platform\/vc-platform-api-key updated$/m);
      for (const ns of ['team-a', 'team-b']) {
        const { r: c, summary } = await check(shared, 'dev', ns, ['--project', 'p']);
        assert.equal(c.code, 0, c.stderr);
        assert.ok(summary?.accessKey && summary.accessKey !== oldKey, `${ns} resolves the new key`);
      }
    });

    it('--print prints the Secret, Role and RoleBinding instead of applying them', TEST, async () => {
      const r = await cli.ok([
        'vcluster',
        'create-secret',
        '--namespace',
        'shared-print',
        '--vcluster',
        'team-c/qa',
        '--print',
        ...hostArgs,
      ]);
      const kinds = parseAllDocuments(r.stdout).map((d) => (d.toJS() as { kind: string }).kind);
      assert.deepEqual(kinds, ['Secret', 'Role', 'RoleBinding']);
      assert.equal(host.secretData('shared-print', 'vc-platform-api-key'), undefined, 'nothing was applied');
    });

    it(
      'an existing key without the vcluster role is refused, naming the role and how to get one',
      TEST,
      async () => {
        const r = await cli.run([
          'vcluster',
          'create-secret',
          '--namespace',
          'vc-other',
          '--use-access-key',
          server.token,
          ...hostArgs,
        ]);
        assert.equal(r.code, 1);
        const line = oneLineError(r);
        assert.match(line, /lacks the virtual cluster role "vcluster" for all projects/);
        assert.match(line, /platform create accesskey --display-name <name> --role vcluster/);
        assert.equal(host.secretData('vc-other', 'vc-platform-api-key'), undefined);
      },
    );
  });

  describe('dedicated mode', () => {
    it(
      'each virtual cluster gets its own key; revoking one breaks only that virtual cluster',
      TEST,
      async () => {
        const names: string[] = [];
        for (const [vc, ns] of [
          ['web', 'ns-web'],
          ['api', 'ns-api'],
        ] as const) {
          const r = await cli.ok([
            'vcluster',
            'connect-key',
            vc,
            '--project',
            'shop',
            '--namespace',
            ns,
            ...hostArgs,
          ]);
          assert.match(r.stdout, new RegExp(`^secret ${ns}/vc-platform-api-key created$`, 'm'));
          const name = /revoke it with: platform delete accesskey (\S+)/.exec(r.stdout)?.[1];
          assert.ok(name, r.stdout);
          names.push(name);
          assert.equal(host.secretData(ns, 'vc-platform-api-key')?.['project'], 'shop');
          const { r: c, summary } = await check(dedicated, vc, ns);
          assert.equal(c.code, 0, c.stderr);
          assert.equal(summary?.source, `secret ${ns}/vc-platform-api-key (default)`);
          assert.equal(summary?.project, 'shop', 'the project comes from the secret');
          assert.equal(summary?.accessKey, name);
          assert.equal(summary?.rbac, undefined, 'no RBAC for a secret in the virtual cluster namespace');
        }
        // Revoke web's key: web's secret still holds it, but the platform no longer accepts it.
        await cli.ok(['delete', 'accesskey', names[0] ?? '']);
        const web = await check(dedicated, 'web', 'ns-web');
        assert.equal(web.r.code, 1);
        assert.match(
          oneLineError(web.r),
          /the access key from secret ns-web\/vc-platform-api-key \(default\) does not work: the access key is invalid/,
        );
        const api = await check(dedicated, 'api', 'ns-api');
        assert.equal(api.r.code, 0, api.r.stderr);
      },
    );

    it('a dedicated key used for another virtual cluster fails the role check', TEST, async () => {
      const r = await cli.ok([
        'vcluster',
        'connect-key',
        'solo',
        '--project',
        'shop',
        '--namespace',
        'ns-solo',
        ...hostArgs,
      ]);
      assert.ok(r.stdout);
      // Another virtual cluster pointed at solo's secret: its key covers solo only.
      const other = config('other', 'external:\n  platform:\n    apiKey:\n      namespace: ns-solo\n');
      const c = await check(other, 'intruder', 'ns-x');
      assert.equal(c.r.code, 1);
      assert.match(
        oneLineError(c.r),
        /lacks the virtual cluster role "vcluster" for project "shop" \(its "vcluster" role covers projects \[shop\] and virtual clusters \[solo\], not shop\/intruder\)/,
      );
    });
  });

  describe('lookup order', () => {
    it('1: LICENSE with PLATFORM_HOST wins over the secrets', TEST, async () => {
      const key = JSON.parse(
        (await cli.ok(['create', 'accesskey', '--display-name', 'env', '--role', 'vcluster', '-o', 'json']))
          .stdout,
      ) as {
        metadata: { name: string };
        spec: { key: string };
      };
      const { r, summary } = await check(shared, 'dev', 'team-a', ['--project', 'any', '--ca-file', caFile], {
        LICENSE: key.spec.key,
        PLATFORM_HOST: platformHost,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(summary?.source, 'environment variable LICENSE');
      assert.equal(summary?.accessKey, key.metadata.name);
    });

    it(
      '2 then 3: the configured secret, else vc-platform-api-key in the virtual cluster namespace',
      TEST,
      async () => {
        const named = config(
          'named',
          'external:\n  platform:\n    project: shop\n    apiKey:\n      secretName: custom-key\n      namespace: keys\n',
        );
        // Nothing at step 2: step 3 (api's dedicated secret in ns-api) answers, after step 2 was looked at.
        const fallback = await check(named, 'api', 'ns-api');
        assert.equal(fallback.r.code, 0, fallback.r.stderr);
        assert.equal(fallback.summary?.source, 'secret ns-api/vc-platform-api-key (default)');
        assert.deepEqual(fallback.summary?.lookedAt, [
          'environment variable LICENSE: not set',
          'secret keys/custom-key (external.platform.apiKey): not found',
          'secret ns-api/vc-platform-api-key (default)',
        ]);
        // Step 2 exists now: it wins over step 3.
        await cli.ok([
          'vcluster',
          'create-secret',
          '--namespace',
          'keys',
          '--secret-name',
          'custom-key',
          ...hostArgs,
        ]);
        const configured = await check(named, 'api', 'ns-api');
        assert.equal(configured.r.code, 0, configured.r.stderr);
        assert.equal(configured.summary?.source, 'secret keys/custom-key (external.platform.apiKey)');
      },
    );

    it('nothing found: one line listing every place looked at', TEST, async () => {
      const named = config(
        'nowhere',
        'external:\n  platform:\n    apiKey:\n      secretName: missing\n      namespace: nowhere\n',
      );
      const { r } = await check(named, 'ghost', 'ns-ghost', ['--project', 'p']);
      assert.equal(r.code, 1);
      assert.equal(
        oneLineError(r),
        'error: no platform access key found for virtual cluster ns-ghost/ghost; looked at: ' +
          'environment variable LICENSE: not set; secret nowhere/missing (external.platform.apiKey): not found; ' +
          'secret ns-ghost/vc-platform-api-key (default): not found',
      );
    });

    it(
      'a configuration without external.platform is not connected, and says how to connect it',
      TEST,
      async () => {
        const none = config('none', 'controlPlane: {}\n');
        const { r } = await check(none, 'dev', 'team-a');
        assert.equal(r.code, 1);
        assert.match(oneLineError(r), /has no external\.platform section/);
      },
    );
  });

  describe('a failed command leaves no access key behind', () => {
    /** The names of every access key on the platform. */
    async function keyNames(): Promise<string[]> {
      const r = await server.api('GET', '/apis/management.platform.dev/v1/ownedaccesskeys');
      assert.equal(r.status, 200, r.text);
      return r
        .json<{ items: { metadata: { name: string } }[] }>()
        .items.map((i) => i.metadata.name)
        .sort();
    }

    const commands = [
      ['create-secret', ['vcluster', 'create-secret', '--namespace', 'vc-fail']],
      ['connect-key', ['vcluster', 'connect-key', 'web', '--project', 'shop', '--namespace', 'ns-fail']],
    ] as const;

    for (const [what, args] of commands) {
      it(
        `${what} with a kube config that points at the platform says so, and makes no key`,
        TEST,
        async () => {
          const before = await keyNames();
          const platformKubeconfig = join(cli.home, 'platform.kubeconfig');
          writeFileSync(
            platformKubeconfig,
            [
              'apiVersion: v1',
              'kind: Config',
              'current-context: platform',
              'contexts: [{name: platform, context: {cluster: platform, user: admin}}]',
              `clusters: [{name: platform, cluster: {server: "${server.apiBase}", insecure-skip-tls-verify: true}}]`,
              `users: [{name: admin, user: {token: "${server.token}"}}]`,
              '',
            ].join('\n'),
          );
          const r = await cli.run([...args, '--kubeconfig', platformKubeconfig]);
          assert.equal(r.code, 1, r.stdout);
          assert.match(
            oneLineError(r),
            /the kube config .*platform\.kubeconfig \(context "platform"\) points at the platform \(https:\/\/127\.0\.0\.1:\d+\/kubernetes\/management\), not at a host cluster: pass --kubeconfig or --context/,
          );
          assert.deepEqual(await keyNames(), before);
        },
      );

      it(`${what} without a host kube config makes no key`, TEST, async () => {
        const before = await keyNames();
        const r = await cli.run([...args, '--kubeconfig', join(cli.home, 'missing.kubeconfig')]);
        assert.equal(r.code, 1, r.stdout);
        assert.match(oneLineError(r), /cannot load the host cluster's kube config/);
        assert.deepEqual(await keyNames(), before);
      });

      it(`${what} refused by the host deletes the key it made, and says so`, TEST, async () => {
        const before = await keyNames();
        host.setClientAuthorizer(() => false);
        try {
          const r = await cli.run([...args, ...hostArgs]);
          assert.equal(r.code, 1, r.stdout);
          assert.match(
            oneLineError(r),
            /the host cluster refused: .*; the access key "vc-[a-z0-9-]+" made for it was deleted/,
          );
        } finally {
          host.setClientAuthorizer(undefined);
        }
        assert.deepEqual(await keyNames(), before);
      });
    }
  });

  it('vcluster rbac prints the Role and RoleBinding, and --apply writes them to the host', TEST, async () => {
    const r = await cli.ok([
      'vcluster',
      'rbac',
      shared,
      '--name',
      'batch',
      '--namespace',
      'ns-batch',
      '--service-account',
      'syncer',
      ...hostArgs,
    ]);
    const docs = parseAllDocuments(r.stdout).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string }; subjects?: unknown },
    );
    assert.deepEqual(
      docs.map((d) => d.kind),
      ['Role', 'RoleBinding'],
    );
    assert.equal(docs[0]?.metadata.namespace, 'vc-platform');
    assert.deepEqual(docs[1]?.subjects, [{ kind: 'ServiceAccount', name: 'syncer', namespace: 'ns-batch' }]);
    const name = docs[0]?.metadata.name ?? '';
    assert.equal(host.object('roles', 'vc-platform', name), undefined);
    await cli.ok([
      'vcluster',
      'rbac',
      shared,
      '--name',
      'batch',
      '--namespace',
      'ns-batch',
      '--service-account',
      'syncer',
      '--apply',
      ...hostArgs,
    ]);
    assert.ok(host.object('roles', 'vc-platform', name));
    assert.ok(host.object('rolebindings', 'vc-platform', name));
    const none = await cli.run([
      'vcluster',
      'rbac',
      dedicated,
      '--name',
      'x',
      '--namespace',
      'ns-x',
      ...hostArgs,
    ]);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /No RBAC needed: the secret is in the virtual cluster's own namespace ns-x/);
  });
});
