// The chart's monitoring: an optional ServiceMonitor that can actually scrape the
// server (HTTPS verified against the serving CA and name, a credential /metrics
// authorizes), alerts and a Grafana dashboard whose every expression reads metrics the
// server really exports (checked against a started server's /metrics), all off by default.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { callServer, startWithAdmin } from '../../pkg/server/testing.js';
import { at } from './invariants.js';
import { validateObject } from './kube-schema.js';
import { exposedTypes, metricNames, problemWith } from './promql-names.js';
import {
  chartDir,
  ensureRenderer,
  RELEASE_NAMESPACE,
  renderChart,
  type KubeObject,
  type RenderOptions,
} from './render.js';

const ALL_ON = {
  monitoring: {
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true },
    dashboard: { enabled: true },
  },
};

function render(opts: RenderOptions = {}): KubeObject[] {
  const r = renderChart({ apiVersions: ['cert-manager.io/v1'], ...opts });
  if (!r.ok) assert.fail(`rendering failed:\n${r.error}`);
  return r.manifests.map((m) => m.object);
}

function find(all: KubeObject[], kind: string, name?: string): KubeObject {
  const o = all.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(o, `${kind} ${name ?? ''} is rendered`);
  return o;
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}

function rules(all: KubeObject[]): Rule[] {
  return (at(find(all, 'PrometheusRule'), 'spec.groups') as Array<{ rules: Rule[] }>).flatMap((g) => g.rules);
}

interface Dashboard {
  uid?: string;
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; query?: string | { query: string } }> };
}

function dashboard(all: KubeObject[]): Dashboard {
  const data = find(all, 'ConfigMap', 'platform-apiserver-dashboard')['data'] as Record<string, string>;
  return JSON.parse(data['platform-apiserver.json'] ?? '') as Dashboard;
}

/** Every PromQL expression the chart ships: the alerts, the panels and the dashboard's variable queries. */
function expressions(all: KubeObject[]): Array<{ where: string; expr: string }> {
  const d = dashboard(all);
  return [
    ...rules(all).map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
    ...d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr }))),
    ...d.templating.list
      .filter((v) => typeof v.query === 'object')
      .map((v) => ({
        where: `variable ${v.name}`,
        expr: (v.query as { query: string }).query.replace(/^label_values\((.*),\s*\w+\)$/, '$1'),
      })),
  ];
}

describe('chart monitoring', () => {
  before(() => {
    ensureRenderer();
  });

  it('renders no ServiceMonitor, PrometheusRule or dashboard by default', () => {
    const kinds = render().map((o) => `${o.kind}/${o.metadata.name}`);
    assert.ok(!kinds.some((k) => /^(ServiceMonitor|PrometheusRule)\//.test(k)), kinds.join(' '));
    assert.ok(!kinds.includes('ConfigMap/platform-apiserver-dashboard'));
    assert.ok(!kinds.includes('ClusterRole/platform-apiserver-metrics-reader'));
  });

  it('scrapes every replica over HTTPS verified against the serving CA, with Prometheus’s own token by default', () => {
    const all = render({ values: [ALL_ON] });
    const sm = find(all, 'ServiceMonitor');
    const service = find(all, 'Service', 'platform-apiserver');
    assert.equal(sm.metadata.namespace, RELEASE_NAMESPACE);
    // It selects the server's Service (not etcd's), in its namespace, by a port the Service has.
    const matchLabels = at(sm, 'spec.selector.matchLabels') as Record<string, string>;
    for (const [k, v] of Object.entries(matchLabels)) assert.equal(service.metadata.labels?.[k], v, k);
    const etcdServices = all.filter((o) => o.kind === 'Service' && o.metadata.name !== 'platform-apiserver');
    for (const s of etcdServices)
      assert.ok(
        Object.entries(matchLabels).some(([k, v]) => s.metadata.labels?.[k] !== v),
        `${s.metadata.name} not selected`,
      );
    assert.deepEqual(at(sm, 'spec.namespaceSelector.matchNames'), [RELEASE_NAMESPACE]);
    const [endpoint] = at(sm, 'spec.endpoints') as Array<Record<string, unknown>>;
    assert.ok(endpoint);
    const ports = (at(service, 'spec.ports') as Array<{ name: string }>).map((p) => p.name);
    assert.ok(
      ports.includes(String(endpoint['port'])),
      `port ${String(endpoint['port'])} in ${ports.join(',')}`,
    );
    assert.equal(endpoint['scheme'], 'https');
    assert.equal(endpoint['path'], '/metrics');
    // The name it verifies is in the serving certificate, and the CA it trusts signed it.
    const tls = find(all, 'Secret', 'platform-apiserver-tls')['data'] as Record<string, string>;
    const cert = new X509Certificate(Buffer.from(tls['tls.crt'] ?? '', 'base64'));
    const ca = new X509Certificate(Buffer.from(tls['ca.crt'] ?? '', 'base64'));
    assert.ok(
      cert.subjectAltName?.split(', ').includes(`DNS:${String(at(endpoint, 'tlsConfig.serverName'))}`),
    );
    assert.ok(cert.verify(ca.publicKey), 'ca.crt signed the serving certificate');
    assert.deepEqual(at(endpoint, 'tlsConfig.ca.secret'), { name: 'platform-apiserver-tls', key: 'ca.crt' });
    assert.equal(at(endpoint, 'tlsConfig.insecureSkipVerify'), undefined);
    // Without a Secret, Prometheus's service account token, which the host reviews.
    assert.equal(endpoint['bearerTokenFile'], '/var/run/secrets/kubernetes.io/serviceaccount/token');
    assert.equal(endpoint['authorization'], undefined);
  });

  it('sends a metrics-reader key from a Secret when told, and grants Prometheus’s service account get on /metrics', () => {
    const all = render({
      values: [
        ALL_ON,
        {
          monitoring: {
            serviceMonitor: {
              labels: { release: 'prom' },
              bearerTokenSecret: { name: 'metrics-key', key: 'key' },
              caSecret: { name: 'my-ca', key: 'bundle.pem' },
              prometheusServiceAccount: { name: 'prometheus', namespace: 'monitoring' },
            },
          },
        },
      ],
    });
    const sm = find(all, 'ServiceMonitor');
    assert.equal(sm.metadata.labels?.['release'], 'prom');
    const [endpoint] = at(sm, 'spec.endpoints') as Array<Record<string, unknown>>;
    assert.deepEqual(endpoint?.['authorization'], {
      type: 'Bearer',
      credentials: { name: 'metrics-key', key: 'key' },
    });
    assert.equal(endpoint?.['bearerTokenFile'], undefined);
    assert.deepEqual(at(endpoint, 'tlsConfig.ca.secret'), { name: 'my-ca', key: 'bundle.pem' });
    const role = find(all, 'ClusterRole', 'platform-apiserver-metrics-reader');
    assert.deepEqual(at(role, 'rules'), [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const binding = find(all, 'ClusterRoleBinding', 'platform-apiserver-metrics-reader');
    assert.deepEqual(at(binding, 'subjects'), [
      { kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' },
    ]);
    assert.equal(at(binding, 'roleRef.name'), 'platform-apiserver-metrics-reader');
  });

  it('alerts on errors, latency, storage and replicas, for this release only, with the thresholds given', () => {
    const all = render({
      values: [
        ALL_ON,
        {
          monitoring: {
            prometheusRule: { errorRatio: 0.2, latencyP99Seconds: 3, for: '15m', alertLabels: { team: 'x' } },
          },
        },
      ],
    });
    const byName = new Map(rules(all).map((r) => [r.alert, r]));
    assert.deepEqual([...byName.keys()].sort(), [
      'PlatformAPIServerDown',
      'PlatformAPIServerErrorRatioHigh',
      'PlatformAPIServerLatencyHigh',
      'PlatformAPIServerReplicaDown',
      'PlatformAPIServerStorageUnavailable',
    ]);
    for (const r of byName.values()) {
      assert.ok(
        r.expr.includes(`job="platform-apiserver",namespace="${RELEASE_NAMESPACE}"`),
        `${r.alert}: ${r.expr}`,
      );
      assert.equal(r.labels?.['team'], 'x', r.alert);
      assert.match(r.labels?.['severity'] ?? '', /^(warning|critical)$/, r.alert);
    }
    assert.match(byName.get('PlatformAPIServerErrorRatioHigh')?.expr ?? '', /code=~"5\.\."[\s\S]*> 0\.2\s*$/);
    assert.equal(byName.get('PlatformAPIServerErrorRatioHigh')?.for, '15m');
    assert.match(
      byName.get('PlatformAPIServerLatencyHigh')?.expr ?? '',
      /histogram_quantile\(0\.99,[\s\S]*by \(job, namespace, verb, le\)[\s\S]*> 3\s*$/,
    );
    assert.match(
      byName.get('PlatformAPIServerStorageUnavailable')?.expr ?? '',
      /etcd_request_errors_total[\s\S]*code=~"503\|504"/,
    );
  });

  it('ships the dashboard in a ConfigMap Grafana’s sidecar loads, with its label configurable', () => {
    const all = render({ values: [ALL_ON] });
    const cm = find(all, 'ConfigMap', 'platform-apiserver-dashboard');
    assert.equal(cm.metadata.labels?.['grafana_dashboard'], '1');
    assert.equal(cm.metadata.namespace, RELEASE_NAMESPACE);
    // The ConfigMap holds the chart's file as it is.
    const file = readFileSync(join(chartDir(), 'dashboards', 'platform-apiserver.json'), 'utf8');
    assert.equal((cm['data'] as Record<string, string>)['platform-apiserver.json'], file.trimEnd());
    const d = dashboard(all);
    assert.equal(d.uid, 'platform-apiserver');
    const titles = d.panels.filter((p) => p.type !== 'row').map((p) => p.title);
    for (const wanted of [
      /^Request rate/,
      /^Errors/,
      /^Latency p99 by verb$/,
      /^Latency p99 by resource$/,
      /^In-flight/,
      /^Storage latency/,
      /^Objects per kind$/,
      /watches/i,
    ])
      assert.ok(
        titles.some((t) => wanted.test(t)),
        `a panel ${String(wanted)} in ${titles.join(', ')}`,
      );
    for (const p of d.panels.filter((x) => x.type !== 'row'))
      assert.ok(
        (p.targets ?? []).length > 0 && p.targets?.every((t) => t.expr.includes('job=~"$job"')),
        p.title,
      );

    const other = render({
      values: [
        ALL_ON,
        { monitoring: { dashboard: { labels: { 'grafana.io/dashboard': 'yes' }, namespace: 'grafana' } } },
      ],
    });
    const moved = find(other, 'ConfigMap', 'platform-apiserver-dashboard');
    assert.equal(moved.metadata.labels?.['grafana.io/dashboard'], 'yes');
    assert.equal(moved.metadata.namespace, 'grafana');
  });

  it('validates the Prometheus Operator objects: a misspelled field or a bad duration is refused', () => {
    const all = render({ values: [ALL_ON] });
    const sm = structuredClone(find(all, 'ServiceMonitor'));
    const rule = structuredClone(find(all, 'PrometheusRule'));
    assert.deepEqual([...validateObject(sm), ...validateObject(rule)], []);
    (at(sm, 'spec.endpoints') as Array<Record<string, unknown>>)[0]!['tlsConfg'] = {};
    (at(rule, 'spec.groups') as Array<{ rules: Rule[] }>)[0]!.rules[0]!.for = '5 minutes';
    assert.match(validateObject(sm).join('\n'), /endpoints\/0 must NOT have additional properties/);
    assert.match(validateObject(rule).join('\n'), /rules\/0\/for must match pattern/);
  });

  it('finds the metric names in PromQL: not labels, functions, keywords, ranges or variables', () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (verb, le) (rate(a_bucket{job=~"$job",x="y{z}"}[$__rate_interval]))) / on (job) group_left b_total > 1e3 or absent(up offset 5m)',
      ),
      ['a_bucket', 'b_total', 'up'],
    );
    const types = exposedTypes('# TYPE h histogram\n# TYPE c_total counter\n');
    assert.equal(problemWith('h_bucket', types), undefined);
    assert.equal(problemWith('c_total', types), undefined);
    assert.match(problemWith('h', types) ?? '', /histogram/);
    assert.match(problemWith('nope_total', types) ?? '', /not exported/);
    assert.match(problemWith('c_total_bucket', types) ?? '', /not exported/);
  });

  describe('against a running server', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'chart-metrics-'));
    let exposition = '';
    let stop: () => Promise<void> = async () => undefined;

    before(async () => {
      const { server, ca, token } = await startWithAdmin(dataDir);
      stop = () => server.stop();
      // A request first, so the per-request families have series too.
      await callServer(
        `${server.url}/kubernetes/management/apis/management.platform.dev/v1/teams`,
        ca,
        token,
      );
      const r = await callServer(`${server.url}/metrics`, ca, token);
      assert.equal(r.status, 200, r.text);
      exposition = r.text;
    });
    after(async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('every alert, panel and variable reads only metrics the server exports', () => {
      const types = exposedTypes(exposition);
      assert.ok(types.size > 20, 'the exposition has TYPE lines');
      const problems: string[] = [];
      let names = 0;
      for (const { where, expr } of expressions(render({ values: [ALL_ON] }))) {
        const found = metricNames(expr);
        assert.ok(found.length > 0, `${where} reads some metric: ${expr}`);
        names += found.length;
        for (const name of found) {
          const problem = problemWith(name, types);
          if (problem) problems.push(`${where}: ${problem}`);
        }
      }
      assert.deepEqual(problems, []);
      assert.ok(names > 20);
    });
  });
});
