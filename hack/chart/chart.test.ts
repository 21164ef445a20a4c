// The chart renders, for its defaults and every scenario in ci/, into objects the
// Kubernetes API accepts and that make a working aggregated API server; bad values
// are refused with clear messages.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { resourcesWhere } from '../../pkg/registry/management/kinds.js';
import { at, checkInvariants, flags } from './invariants.js';
import { loadPolicy, PolicyChecker } from '../../pkg/audit/policy.js';
import { validateObject } from './kube-schema.js';
import {
  chartDir,
  ensureRenderer,
  RELEASE_NAMESPACE,
  renderChart,
  scenarioFiles,
  type KubeObject,
  type RenderOptions,
  type RenderResult,
} from './render.js';

// cert-manager's API is present in every rendering, as on a cluster that has it;
// the chart refuses tls.mode certManager without it (tested below).
const withCertManager: RenderOptions = { apiVersions: ['cert-manager.io/v1'] };

function ok(r: RenderResult): Extract<RenderResult, { ok: true }> {
  if (!r.ok) assert.fail(`rendering failed:\n${r.error}`);
  return r;
}

function objects(r: RenderResult): KubeObject[] {
  return ok(r).manifests.map((m) => m.object);
}

function find(all: KubeObject[], kind: string, name?: string): KubeObject {
  const o = all.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(o, `${kind} ${name ?? ''} is rendered`);
  return o;
}

function serverFlags(all: KubeObject[]): Map<string, string> {
  const containers = at(find(all, 'Deployment'), 'spec.template.spec.containers') as Record<
    string,
    unknown
  >[];
  const server = containers.find((c) => c['name'] === 'apiserver');
  assert.ok(server);
  return flags(server);
}

function errorOf(r: RenderResult): string {
  assert.equal(r.ok, false, 'rendering should fail');
  return r.ok ? '' : r.error;
}

describe('charts/platform-apiserver', () => {
  before(() => {
    ensureRenderer();
  });

  const cases: { name: string; opts: RenderOptions }[] = [
    { name: 'default values', opts: withCertManager },
    ...scenarioFiles().map((f) => ({
      name: `ci/${basename(f)}`,
      opts: { ...withCertManager, valueFiles: [f] },
    })),
  ];
  assert.ok(cases.length >= 6, 'the scenarios exist');

  for (const c of cases) {
    describe(c.name, () => {
      it('renders objects the Kubernetes OpenAPI schemas accept, with no unknown fields', () => {
        const all = objects(renderChart(c.opts));
        assert.ok(all.length > 10);
        assert.deepEqual(all.flatMap(validateObject), []);
      });

      it('keeps every invariant of a working aggregated API server', () => {
        const r = ok(renderChart(c.opts));
        assert.deepEqual(
          checkInvariants(
            r.manifests.map((m) => m.object),
            { namespace: RELEASE_NAMESPACE, values: r.values },
          ),
          [],
        );
      });

      it('has NOTES that say how to get the admin key and reach the group', () => {
        const r = ok(renderChart(c.opts));
        const group = String(r.values['apiGroup']);
        const f = serverFlags(r.manifests.map((m) => m.object));
        const [ns, secret] = (f.get('bootstrap-secret') ?? '').split('/');
        assert.ok(r.notes.includes(`kubectl -n ${String(ns)} get secret ${String(secret)}`), r.notes);
        assert.ok(r.notes.includes(`kubectl api-resources --api-group ${group}`));
        assert.ok(r.notes.includes(`kubectl get apiservice v1.${group}`));
      });
    });
  }

  it('defaults to two replicas on a bundled three-member etcd with a generated certificate', () => {
    const all = objects(renderChart());
    assert.equal(at(find(all, 'Deployment'), 'spec.replicas'), 2);
    assert.equal(at(find(all, 'StatefulSet'), 'spec.replicas'), 3);
    const f = serverFlags(all);
    assert.equal(f.get('storage-backend'), 'etcd3');
    assert.equal(f.get('etcd-servers')?.split(',').length, 3);
    const apiService = find(all, 'APIService', 'v1.management.platform.dev');
    assert.deepEqual(at(apiService, 'spec.service'), {
      name: 'platform-apiserver',
      namespace: RELEASE_NAMESPACE,
      port: 443,
    });
    assert.equal(at(apiService, 'spec.insecureSkipTLSVerify'), undefined);
    assert.equal(at(apiService, 'spec.groupPriorityMinimum'), 1000);
    assert.equal(at(apiService, 'spec.versionPriority'), 15);
    const tls = find(all, 'Secret', 'platform-apiserver-tls');
    const cert = new X509Certificate(
      Buffer.from(String((tls['data'] as Record<string, string>)['tls.crt']), 'base64'),
    );
    assert.ok(cert.subjectAltName?.split(', ').includes('DNS:platform-apiserver.platform-system.svc'));
    assert.equal(
      all.some((o) => o.kind === 'Namespace'),
      false,
      'Helm creates the namespace, not the chart',
    );
  });

  it('follows the API group, namespace and release name it is given', () => {
    const all = objects(
      renderChart({ name: 'mgmt', namespace: 'tools', values: [{ apiGroup: 'management.example.com' }] }),
    );
    const apiService = find(all, 'APIService', 'v1.management.example.com');
    assert.equal(at(apiService, 'spec.group'), 'management.example.com');
    assert.deepEqual(at(apiService, 'spec.service'), {
      name: 'mgmt-platform-apiserver',
      namespace: 'tools',
      port: 443,
    });
    assert.equal(serverFlags(all).get('api-group'), 'management.example.com');
    const roles = all.filter(
      (o) =>
        o.kind === 'ClusterRole' &&
        o.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'] === 'true',
    );
    assert.deepEqual(at(roles[0], 'rules'), [
      {
        apiGroups: ['management.example.com'],
        resources: ['teams', 'users'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['management.example.com'],
        resources: ['sharedsecrets'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
      },
      {
        apiGroups: ['management.example.com'],
        resources: ['virtualclusterinstances/kubeconfig'],
        verbs: ['create'],
      },
    ]);
  });

  it('keeps the generated certificate across upgrades (lookup finds the Secret of the first install)', () => {
    const first = objects(renderChart());
    const secret = find(first, 'Secret', 'platform-apiserver-tls');
    const upgrade = objects(renderChart({ isUpgrade: true, lookup: [secret] }));
    assert.deepEqual(find(upgrade, 'Secret', 'platform-apiserver-tls')['data'], secret['data']);
    assert.equal(
      at(find(upgrade, 'APIService'), 'spec.caBundle'),
      at(find(first, 'APIService'), 'spec.caBundle'),
    );
    // Without the Secret (a fresh install) a new CA is made.
    const fresh = objects(renderChart());
    assert.notEqual(
      at(find(fresh, 'APIService'), 'spec.caBundle'),
      at(find(first, 'APIService'), 'spec.caBundle'),
    );
  });

  it('encrypts Global Secrets with a generated secretbox key that upgrades keep, or the Secret the operator names', () => {
    const first = objects(renderChart());
    const secret = find(first, 'Secret', 'platform-apiserver-encryption');
    assert.equal(secret.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    const config = Buffer.from(
      String((secret['data'] as Record<string, string>)['encryption-config.yaml']),
      'base64',
    ).toString();
    assert.match(config, /kind: EncryptionConfiguration/);
    assert.match(config, /- sharedsecrets\.management\.platform\.dev/);
    // The same resources as the server's own generated file: the kinds encrypted by default.
    const encrypted = (parse(config) as { resources: { resources: string[] }[] }).resources[0]?.resources;
    const group = 'management.platform.dev';
    assert.deepEqual(
      encrypted,
      resourcesWhere(group, (k) => k.traits.encryptedByDefault).map((r) => `${r}.${group}`),
    );
    const key = /secretbox:\s+keys:\s+- name: key1\s+secret: (\S+)/.exec(config)?.[1] ?? '';
    assert.equal(Buffer.from(key, 'base64').length, 32);
    const f = serverFlags(first);
    assert.equal(
      f.get('encryption-provider-config'),
      '/etc/platform-apiserver/encryption/encryption-config.yaml',
    );
    assert.equal(f.get('encryption-provider-config-automatic-reload'), 'true');
    // An upgrade finds the first install's Secret and keeps its key; a fresh install makes another.
    const upgrade = objects(renderChart({ isUpgrade: true, lookup: [secret] }));
    assert.deepEqual(find(upgrade, 'Secret', 'platform-apiserver-encryption')['data'], secret['data']);
    assert.notDeepEqual(
      find(objects(renderChart()), 'Secret', 'platform-apiserver-encryption')['data'],
      secret['data'],
    );
    // The operator's own Secret: mounted, nothing generated.
    const own = objects(renderChart({ values: [{ encryption: { existingSecret: 'my-keys' } }] }));
    assert.equal(
      own.some((o) => o.kind === 'Secret' && o.metadata.name === 'platform-apiserver-encryption'),
      false,
    );
    const volumes = at(find(own, 'Deployment'), 'spec.template.spec.volumes') as {
      name: string;
      secret?: { secretName: string };
    }[];
    assert.equal(volumes.find((v) => v.name === 'encryption')?.secret?.secretName, 'my-keys');
    // Off: no flag, no Secret.
    const off = objects(renderChart({ values: [{ encryption: { enabled: false } }] }));
    assert.equal(serverFlags(off).has('encryption-provider-config'), false);
  });

  it('audits with a default policy in a ConfigMap that the server reads, to stdout or to a volume', () => {
    const all = objects(renderChart());
    const config = find(all, 'ConfigMap', 'platform-apiserver-audit-policy');
    const policy = new PolicyChecker(
      loadPolicy(String((config['data'] as Record<string, string>)['policy.yaml'])),
    );
    const level = (verb: string, resource: string, subresource = '', path = ''): string =>
      policy.evaluate({
        user: { name: 'alice', groups: [] },
        verb,
        isResourceRequest: resource !== '',
        path,
        apiGroup: resource === '' ? '' : 'management.platform.dev',
        resource,
        subresource,
        namespace: '',
        name: 'x',
      }).level;
    // The kinds that carry secrets never above Metadata; other writes in full; probes and discovery not at all.
    for (const verb of ['create', 'update', 'patch', 'get', 'list', 'watch']) {
      for (const resource of ['sharedsecrets', 'ownedaccesskeys', 'directclusterendpointtokens'])
        assert.equal(level(verb, resource), 'Metadata', `${verb} ${resource}`);
    }
    assert.equal(level('create', 'virtualclusterinstances', 'kubeconfig'), 'Metadata');
    assert.equal(level('get', 'users', 'accesskeys'), 'Metadata');
    assert.equal(level('create', 'teams'), 'RequestResponse');
    assert.equal(level('delete', 'users'), 'RequestResponse');
    assert.equal(level('get', 'teams'), 'Metadata');
    for (const path of [
      '/readyz',
      '/livez',
      '/healthz/ping',
      '/metrics',
      '/version',
      '/apis',
      '/apis/management.platform.dev/v1',
      '/openapi/v3',
    ])
      assert.equal(level('get', '', '', path), 'None', path);
    const f = serverFlags(all);
    assert.equal(f.get('audit-policy-file'), '/etc/platform-apiserver/audit/policy.yaml');
    assert.equal(f.get('audit-log-path'), '-');
    assert.equal(f.get('audit-log-mode'), 'blocking');
    // To a volume: the operator's claim, rotation flags.
    const file = objects(
      renderChart({ values: [{ audit: { log: { destination: 'file', existingClaim: 'audit-logs' } } }] }),
    );
    const ff = serverFlags(file);
    assert.equal(ff.get('audit-log-path'), '/var/log/platform-apiserver/audit.log');
    assert.equal(ff.get('audit-log-maxsize'), '100');
    assert.equal(ff.get('audit-log-compress'), 'true');
    const volumes = at(find(file, 'Deployment'), 'spec.template.spec.volumes') as {
      name: string;
      persistentVolumeClaim?: { claimName: string };
    }[];
    assert.equal(volumes.find((v) => v.name === 'audit-log')?.persistentVolumeClaim?.claimName, 'audit-logs');
    // The operator's own policy, verbatim.
    const own = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n';
    const custom = find(
      objects(renderChart({ values: [{ audit: { policy: own } }] })),
      'ConfigMap',
      'platform-apiserver-audit-policy',
    );
    assert.equal(
      loadPolicy(String((custom['data'] as Record<string, string>)['policy.yaml'])).rules[0]?.level,
      'RequestResponse',
    );
    // Off: no flags, no ConfigMap.
    const off = objects(renderChart({ values: [{ audit: { enabled: false } }] }));
    assert.equal(serverFlags(off).has('audit-policy-file'), false);
    assert.equal(
      off.some((o) => o.kind === 'ConfigMap' && o.metadata.name === 'platform-apiserver-audit-policy'),
      false,
    );
  });

  it('refuses sqlite with more than one replica, with a clear message', () => {
    const error = errorOf(renderChart({ values: [{ storage: { backend: 'sqlite' } }] }));
    assert.match(
      error,
      /^Error: execution error at \(platform-apiserver\/templates\/deployment\.yaml:\d+:\d+\): storage\.backend sqlite .*replicaCount must be 1 \(got 2\)\. Use storage\.backend etcd3 for more than one replica\.$/,
    );
    const three = errorOf(renderChart({ values: [{ storage: { backend: 'sqlite' }, replicaCount: 3 }] }));
    assert.match(three, /replicaCount must be 1 \(got 3\)/);
  });

  it('runs sqlite as one pod on a kept PersistentVolumeClaim', () => {
    const all = objects(renderChart({ values: [{ storage: { backend: 'sqlite' }, replicaCount: 1 }] }));
    assert.equal(
      all.some((o) => o.kind === 'StatefulSet' || o.kind === 'PodDisruptionBudget'),
      false,
    );
    const pvc = find(all, 'PersistentVolumeClaim', 'platform-apiserver-data');
    assert.equal(pvc.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
    assert.equal(at(find(all, 'Deployment'), 'spec.strategy.type'), 'Recreate');
  });

  it('rejects unknown and wrongly typed values through values.schema.json', () => {
    const typo = errorOf(renderChart({ values: [{ tls: { mdoe: 'generate' } }] }));
    assert.match(typo, /values don't meet the specifications of the schema\(s\)/);
    assert.match(typo, /- tls: additional property 'mdoe' is not allowed/);
    assert.match(
      errorOf(renderChart({ values: [{ replicaCount: '2' }] })),
      /- replicaCount: must be integer/,
    );
    assert.match(
      errorOf(renderChart({ values: [{ storage: { backend: 'postgres' } }] })),
      /- storage\.backend: must be equal to one of the allowed values/,
    );
    assert.match(
      errorOf(renderChart({ values: [{ apiService: { groupPriorityMinimum: 30000 } }] })),
      /- apiService\.groupPriorityMinimum: must be <= 20000/,
    );
    assert.match(errorOf(renderChart({ values: [{ tls: null }] })), /- \(root\): missing property 'tls'/);
    assert.match(
      errorOf(renderChart({ values: [{ unknownTopLevel: true }] })),
      /additional property 'unknownTopLevel' is not allowed/,
    );
  });

  it('documents every value in values.yaml', () => {
    const lines = readFileSync(join(chartDir(), 'values.yaml'), 'utf8').split('\n');
    const undocumented: string[] = [];
    const stack: { indent: number; key: string }[] = [];
    lines.forEach((line, i) => {
      const m = /^( *)([A-Za-z][\w.-]*):(.*)$/.exec(line);
      if (!m) return;
      const [, spaces = '', key = '', rest = ''] = m;
      while (stack.length > 0 && (stack.at(-1)?.indent ?? 0) >= spaces.length) stack.pop();
      const path = [...stack.map((e) => e.key), key].join('.');
      stack.push({ indent: spaces.length, key });
      // Inside a block that is one Kubernetes field (resources, security contexts, labels), the block's comment documents it.
      const insideKubeField =
        /^(resources|podSecurityContext|securityContext|namespace\.labels|storage\.etcd\.bundled\.resources)\./.test(
          path,
        );
      const isLeaf = rest.trim() !== '';
      if (isLeaf && !insideKubeField && !(lines[i - 1] ?? '').trim().startsWith('#')) undocumented.push(path);
    });
    assert.deepEqual(undocumented, []);
  });

  it('refuses tls.mode certManager when the cluster does not serve cert-manager', () => {
    const error = errorOf(renderChart({ values: [{ tls: { mode: 'certManager' } }] }));
    assert.match(
      error,
      /tls\.mode certManager needs cert-manager \(API cert-manager\.io\/v1\), which this cluster does not serve/,
    );
  });

  it('requires the Secret name with tls.mode existingSecret, and etcd servers with external etcd', () => {
    assert.match(
      errorOf(renderChart({ values: [{ tls: { mode: 'existingSecret' } }] })),
      /: tls\.existingSecret\.name is required when tls\.mode is existingSecret$/,
    );
    assert.match(
      errorOf(renderChart({ values: [{ storage: { etcd: { mode: 'external' } } }] })),
      /storage\.etcd\.external\.servers must list the etcd client URLs/,
    );
    assert.match(
      errorOf(renderChart({ values: [{ storage: { etcd: { bundled: { replicas: 2 } } } }] })),
      /storage\.etcd\.bundled\.replicas must be odd \(got 2\)/,
    );
  });

  it('uses an existing cert-manager issuer when given, and injects the CA into the APIService', () => {
    const all = objects(
      renderChart({
        ...withCertManager,
        values: [
          {
            tls: {
              mode: 'certManager',
              certManager: {
                issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
              },
            },
          },
        ],
      }),
    );
    assert.equal(
      all.some((o) => o.kind === 'Issuer'),
      false,
    );
    const cert = find(all, 'Certificate', 'platform-apiserver-tls');
    assert.deepEqual(at(cert, 'spec.issuerRef'), {
      name: 'corp-ca',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    const apiService = find(all, 'APIService');
    assert.equal(
      apiService.metadata.annotations?.['cert-manager.io/inject-ca-from'],
      'platform-system/platform-apiserver-tls',
    );
    assert.equal(at(apiService, 'spec.caBundle'), undefined);
  });

  it('mounts the external etcd client certificate and points the server at it', () => {
    const r = ok(
      renderChart({ valueFiles: scenarioFiles().filter((f) => f.endsWith('external-etcd-values.yaml')) }),
    );
    const all = r.manifests.map((m) => m.object);
    assert.equal(
      all.some((o) => o.kind === 'StatefulSet' || o.kind === 'NetworkPolicy'),
      false,
    );
    const f = serverFlags(all);
    assert.equal(
      f.get('etcd-servers'),
      'https://etcd-0.etcd.example.internal:2379,https://etcd-1.etcd.example.internal:2379,https://etcd-2.etcd.example.internal:2379',
    );
    assert.equal(f.get('etcd-cafile'), '/etc/platform-apiserver/etcd/ca.crt');
    assert.equal(f.get('etcd-prefix'), '/platform');
  });

  it('passes the settings of the kubeconfig subresource and extra args to the server', () => {
    const all = objects(
      renderChart({
        values: [
          {
            virtualClusters: { ingressSuffix: 'vc.example.com', projectNamespacePrefix: 'project-' },
            hostCluster: { kubeconfigSecret: 'host-kubeconfig' },
            server: { extraArgs: ['--requestheader-allowed-names=front-proxy-client'] },
          },
        ],
      }),
    );
    const f = serverFlags(all);
    assert.equal(f.get('ingress-suffix'), 'vc.example.com');
    assert.equal(f.get('project-namespace-prefix'), 'project-');
    assert.equal(f.get('host-kubeconfig'), '/etc/platform-apiserver/host/kubeconfig');
    assert.equal(f.get('requestheader-allowed-names'), 'front-proxy-client');
    assert.deepEqual(all.flatMap(validateObject), []);
  });

  it("leaves garbage collection to the host's kube-controller-manager", () => {
    assert.equal(serverFlags(objects(renderChart())).get('enable-garbage-collector'), 'false');
  });

  // The checks themselves must be able to fail: break a sound rendering, expect a complaint.
  describe('the checks catch broken renderings', () => {
    function broken(mutate: (all: KubeObject[]) => void): string[] {
      const r = ok(renderChart());
      const all = structuredClone(r.manifests.map((m) => m.object));
      mutate(all);
      return [
        ...checkInvariants(all, { namespace: RELEASE_NAMESPACE, values: r.values }),
        ...all.flatMap(validateObject),
      ];
    }
    const server = (all: KubeObject[]): Record<string, unknown> =>
      (
        at(
          all.find((o) => o.kind === 'Deployment'),
          'spec.template.spec.containers',
        ) as Record<string, unknown>[]
      )[0] ?? {};

    it('an APIService without caBundle', () => {
      assert.ok(
        broken(
          (all) =>
            delete (all.find((o) => o.kind === 'APIService')?.['spec'] as Record<string, unknown>)[
              'caBundle'
            ],
        ).includes('APIService: no caBundle (and no cert-manager CA injection)'),
      );
    });
    it('insecureSkipTLSVerify', () => {
      const problems = broken((all) =>
        Object.assign(all.find((o) => o.kind === 'APIService')?.['spec'] as object, {
          insecureSkipTLSVerify: true,
        }),
      );
      assert.ok(problems.some((p) => p.endsWith('insecureSkipTLSVerify')));
    });
    it('a plain-HTTP probe', () => {
      const problems = broken((all) =>
        Object.assign(at(server(all), 'readinessProbe.httpGet') as object, { scheme: 'HTTP' }),
      );
      assert.ok(problems.some((p) => p.includes('readinessProbe is not HTTPS GET /readyz')));
    });
    it('a writable root filesystem and kept capabilities', () => {
      const problems = broken((all) =>
        Object.assign(server(all)['securityContext'] as object, {
          readOnlyRootFilesystem: false,
          capabilities: { drop: [] },
        }),
      );
      assert.ok(problems.some((p) => p.endsWith('the root filesystem is not read-only')));
      assert.ok(problems.some((p) => p.endsWith('capabilities are not all dropped')));
    });
    it('a certificate for the wrong name', () => {
      const problems = broken((all) => {
        const other = ok(renderChart({ name: 'other' })).manifests.map((m) => m.object);
        const otherSecret = other.find((o) => o.kind === 'Secret');
        const secret = all.find((o) => o.kind === 'Secret');
        if (secret && otherSecret) secret['data'] = otherSecret['data'];
      });
      assert.ok(
        problems.some((p) =>
          p.startsWith('serving certificate: no SAN platform-apiserver.platform-system.svc'),
        ),
      );
      assert.ok(problems.includes('serving certificate: not signed by the APIService caBundle'));
    });
    it('a misspelled field and a wrong type', () => {
      const problems = broken((all) => {
        Object.assign(server(all), { imagePullPolcy: 'Always' });
        Object.assign(
          at(
            all.find((o) => o.kind === 'Deployment'),
            'spec',
          ) as object,
          { replicas: 'two' },
        );
      });
      assert.ok(
        problems.some((p) => p.includes('unknown field "spec.template.spec.containers[0].imagePullPolcy"')),
      );
      assert.ok(problems.some((p) => p.includes('data/spec/replicas must be integer')));
    });
    it('a missing auth-delegator binding', () => {
      const problems = broken((all) =>
        all.splice(
          all.findIndex((o) => at(o, 'roleRef.name') === 'system:auth-delegator'),
          1,
        ),
      );
      assert.ok(problems.includes('no ClusterRoleBinding of system:auth-delegator to the server'));
    });
  });
});
