// The renderer in hack/helm-render behaves as Helm does for the built-ins the chart
// relies on, shown on the small chart in testdata/fixture.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureRenderer, renderChart, repoRoot, type RenderResult } from './render.js';

const fixture = (): string => join(repoRoot(), 'hack', 'chart', 'testdata', 'fixture');

function rendered(r: RenderResult) {
  if (!r.ok) assert.fail(`rendering failed: ${r.error}`);
  return r;
}

function facts(r: RenderResult): Record<string, string> {
  const cm = rendered(r).manifests.find((m) => m.object.metadata.name === 'facts');
  assert.ok(cm, 'the facts ConfigMap is rendered');
  return cm.object['data'] as Record<string, string>;
}

describe('hack/helm-render', () => {
  before(() => {
    ensureRenderer();
  });

  it('exposes .Release, .Chart, .Capabilities and .Template like Helm', () => {
    const data = facts(renderChart({ chart: fixture(), name: 'rel', namespace: 'ns' }));
    assert.equal(data['release'], 'rel/ns install=true upgrade=false revision=1 service=Helm');
    assert.equal(data['chart'], 'fixture 1.2.3 9.9');
    assert.equal(data['kube'], 'v1.32.0 1 32');
    assert.equal(data['hasApps'], 'true');
    assert.equal(data['hasDeploymentKind'], 'true');
    assert.equal(data['hasCertManager'], 'false');
    assert.equal(data['template'], 'fixture/templates/a-facts.yaml');
    const upgrade = facts(
      renderChart({
        chart: fixture(),
        name: 'rel',
        namespace: 'ns',
        isUpgrade: true,
        apiVersions: ['cert-manager.io/v1'],
      }),
    );
    assert.equal(upgrade['release'], 'rel/ns install=false upgrade=true revision=2 service=Helm');
    assert.equal(upgrade['hasCertManager'], 'true');
  });

  it('decodes numbers as Helm does (float64) and keeps integers whole in toYaml', () => {
    const data = facts(renderChart({ chart: fixture() }));
    assert.equal(data['countKind'], 'float64');
    assert.equal(data['count'], '3');
    assert.equal(data['big'], '1000000');
  });

  it('merges values files over values.yaml: maps merge, null deletes, lists replace', () => {
    const r = rendered(
      renderChart({ chart: fixture(), values: [{ nested: { drop: null, list: ['z'] } }, { count: 5 }] }),
    );
    assert.deepEqual(r.values['nested'], { keep: 'kept', list: ['z'] });
    assert.equal(r.values['count'], 5);
    assert.equal(facts(r)['nested'], 'keep: kept\nlist:\n  - z\n');
  });

  it('runs include, tpl and fromYaml, and prints nothing for a missing value', () => {
    const r = renderChart({ chart: fixture(), name: 'rel' });
    const data = facts(r);
    assert.equal(data['greeting'], 'hello rel from fixture-1.2.3');
    assert.equal(data['fromYaml'], '["x"]');
    assert.equal(data['missing'], '');
    const cm = rendered(r).manifests.find((m) => m.object.metadata.name === 'facts');
    assert.deepEqual(cm?.object.metadata.labels, { app: 'fixture-1.2.3', release: 'rel' });
  });

  it('answers lookup from the given objects, and with an empty map otherwise', () => {
    assert.equal(facts(renderChart({ chart: fixture(), namespace: 'ns' }))['lookedUp'], '{}');
    const existing = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'existing', namespace: 'ns' } };
    const elsewhere = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'existing', namespace: 'other' },
    };
    assert.equal(
      facts(renderChart({ chart: fixture(), namespace: 'ns', lookup: [existing] }))['lookedUp'],
      '{"name":"existing","namespace":"ns"}',
    );
    assert.equal(
      facts(renderChart({ chart: fixture(), namespace: 'ns', lookup: [elsewhere] }))['lookedUp'],
      '{}',
    );
  });

  it("orders documents by Helm's install order, stable within a kind, skipping partials and empty files", () => {
    const r = rendered(renderChart({ chart: fixture(), name: 'rel', namespace: 'ns' }));
    assert.deepEqual(
      r.manifests.map((m) => `${m.object.kind}/${m.object.metadata.name}`),
      [
        'Namespace/ns',
        'ConfigMap/facts',
        'ConfigMap/b-first',
        'ConfigMap/b-second',
        'Deployment/b-deployment',
      ],
    );
    assert.equal(r.notes, 'Installed rel (fixture-1.2.3).\n');
  });

  it('reports required and fail as Helm does: execution error at (<template>:<line>:<col>)', () => {
    const missing = renderChart({ chart: fixture(), values: [{ needsValue: { other: 1 } }] });
    assert.equal(missing.ok, false);
    assert.match(
      missing.ok ? '' : missing.error,
      /^Error: execution error at \(fixture\/templates\/a-facts\.yaml:\d+:\d+\): needsValue\.name is required$/,
    );
    const failed = renderChart({
      chart: fixture(),
      values: [{ mustFail: 'this combination is not supported' }],
    });
    assert.match(
      failed.ok ? '' : failed.error,
      /^Error: execution error at \(fixture\/templates\/a-facts\.yaml:\d+:\d+\): this combination is not supported$/,
    );
  });

  it("refuses a Kubernetes version outside the chart's kubeVersion", () => {
    const r = renderChart({ chart: fixture(), kubeVersion: 'v1.27.3' });
    assert.equal(r.ok, false);
    assert.equal(
      r.ok ? '' : r.error,
      'Error: chart requires kubeVersion: >=1.28.0-0 which is incompatible with Kubernetes v1.27.3',
    );
  });
});
