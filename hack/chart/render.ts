// Renders charts/platform-apiserver the way `helm template` would, without Helm: the
// Go renderer in hack/helm-render (text/template + Sprig, Helm's built-ins) is built
// once into .tmp/helm-render/<hash of its source>/ and run; the coalesced values are
// checked against values.schema.json first, as Helm does before rendering.
//
// As a command (prints the manifests like `helm template`):
//   npx tsx hack/chart/render.ts [-f values.yaml]... [--name N] [--namespace NS]
//                                [--api-versions g/v]... [--lookup objects.yaml]

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import YAML from 'yaml';
import { buildGoProgram, runCommand } from '../go-program.js';

/** A Kubernetes object as rendered: only the envelope is typed. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface RenderedManifest {
  /** The template it came from, e.g. platform-apiserver/templates/deployment.yaml. */
  source: string;
  /** The document as rendered. */
  content: string;
  object: KubeObject;
}

export interface RenderOptions {
  /** The chart directory; charts/platform-apiserver when absent. */
  chart?: string;
  /** Values laid over values.yaml, in order (like several `-f` files). */
  values?: readonly Record<string, unknown>[];
  /** Values files laid over values.yaml before `values`. */
  valueFiles?: readonly string[];
  name?: string;
  namespace?: string;
  /** Extra group/versions the cluster serves (`--api-versions`). */
  apiVersions?: readonly string[];
  /** Objects `lookup` finds, as if they existed in the cluster. */
  lookup?: readonly unknown[];
  isUpgrade?: boolean;
  kubeVersion?: string;
}

export type RenderResult =
  | { ok: true; manifests: RenderedManifest[]; notes: string; values: Record<string, unknown> }
  | { ok: false; error: string };

export const RELEASE_NAME = 'platform-apiserver';
export const RELEASE_NAMESPACE = 'platform-system';

/** The repository root: found upwards, so this works from hack/ and from dist/hack/. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (
      existsSync(join(dir, 'charts', 'platform-apiserver', 'Chart.yaml')) &&
      existsSync(join(dir, 'hack', 'helm-render'))
    ) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        'cannot find the repository root (charts/platform-apiserver) above ' + fileURLToPath(import.meta.url),
      );
    dir = up;
  }
}

export function chartDir(): string {
  return join(repoRoot(), 'charts', 'platform-apiserver');
}

const run = runCommand;

let rendererPath: string | undefined;

/**
 * Installs Go and the Sprig sources when missing (hack/chart/ensure-go.sh) and builds
 * the renderer, unless a build of the same source exists. Throws with the reason.
 */
export function ensureRenderer(): string {
  if (rendererPath) return rendererPath;
  const root = repoRoot();
  const ensure = run('bash', [join(root, 'hack', 'chart', 'ensure-go.sh')]);
  if (ensure.status !== 0) {
    throw new Error(
      `hack/chart/ensure-go.sh failed (exit ${ensure.status}):\n${ensure.stdout}${ensure.stderr}`,
    );
  }
  const bin = buildGoProgram({
    name: 'helm-render',
    root,
    srcDir: join(root, 'hack', 'helm-render'),
    sources: ['main.go'],
    // Debian's packaged Go sources, offline: no module proxy is needed or wanted.
    env: { GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '' },
  });
  rendererPath = bin;
  return bin;
}

const valuesValidators = new Map<string, ReturnType<Ajv['compile']> | null>();

/** Checks values against the chart's values.schema.json (if it has one), as Helm does. */
function validateValues(chart: string, chartName: string, values: unknown): string | undefined {
  let validate = valuesValidators.get(chart);
  if (validate === undefined) {
    const file = join(chart, 'values.schema.json');
    validate = existsSync(file)
      ? new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(file, 'utf8')) as object)
      : null;
    valuesValidators.set(chart, validate);
  }
  if (validate === null || validate(values)) return undefined;
  const lines = (validate.errors ?? []).map(describeSchemaError);
  return `values don't meet the specifications of the schema(s) in the following chart(s):\n${chartName}:\n${lines.join('\n')}`;
}

function describeSchemaError(e: ErrorObject): string {
  const at = e.instancePath === '' ? '(root)' : e.instancePath.slice(1).replaceAll('/', '.');
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperty' || e.keyword === 'additionalProperties') {
    return `- ${at}: additional property '${String(params['additionalProperty'])}' is not allowed`;
  }
  if (e.keyword === 'required') return `- ${at}: missing property '${String(params['missingProperty'])}'`;
  return `- ${at}: ${e.message ?? e.keyword}`;
}

/** Renders the chart. Template failures and schema violations come back as { ok: false }. */
export function renderChart(opts: RenderOptions = {}): RenderResult {
  const bin = ensureRenderer();
  const work = mkdtempSync(join(tmpdir(), 'chart-render-'));
  try {
    const chart = resolve(opts.chart ?? chartDir());
    const args = [
      '--chart',
      chart,
      '--name',
      opts.name ?? RELEASE_NAME,
      '--namespace',
      opts.namespace ?? RELEASE_NAMESPACE,
    ];
    for (const f of opts.valueFiles ?? []) args.push('--values', resolve(f));
    (opts.values ?? []).forEach((v, i) => {
      const file = join(work, `values-${i}.yaml`);
      writeFileSync(file, YAML.stringify(v));
      args.push('--values', file);
    });
    for (const v of opts.apiVersions ?? []) args.push('--api-versions', v);
    if (opts.lookup) {
      const file = join(work, 'lookup.yaml');
      writeFileSync(file, opts.lookup.map((o) => YAML.stringify(o)).join('---\n'));
      args.push('--lookup', file);
    }
    if (opts.isUpgrade) args.push('--is-upgrade');
    if (opts.kubeVersion) args.push('--kube-version', opts.kubeVersion);

    const valuesRun = run(bin, [...args, '--values-only']);
    if (valuesRun.status !== 0) return { ok: false, error: valuesRun.stderr.trim() };
    const values = JSON.parse(valuesRun.stdout) as Record<string, unknown>;
    const chartName = (YAML.parse(readFileSync(join(chart, 'Chart.yaml'), 'utf8')) as { name: string }).name;
    const schemaError = validateValues(chart, chartName, values);
    if (schemaError) return { ok: false, error: `Error: ${schemaError}` };

    const r = run(bin, [...args, '--output', 'json']);
    if (r.status !== 0) return { ok: false, error: r.stderr.trim() };
    const out = JSON.parse(r.stdout) as { manifests: { source: string; content: string }[]; notes: string };
    const manifests = out.manifests.map((m) => ({ ...m, object: parseManifest(m.source, m.content) }));
    return { ok: true, manifests, notes: out.notes, values };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Parses one rendered document as the API server would: YAML 1.1 (sigs.k8s.io/yaml
 * uses a YAML 1.1 parser, so `yes` is a boolean), duplicate keys rejected.
 */
export function parseManifest(source: string, content: string): KubeObject {
  const doc = YAML.parseDocument(content, { version: '1.1', uniqueKeys: true });
  if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
  const obj = doc.toJS() as unknown;
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    throw new Error(`${source}: a document is not an object`);
  const o = obj as Partial<KubeObject>;
  if (
    typeof o.apiVersion !== 'string' ||
    typeof o.kind !== 'string' ||
    typeof o.metadata?.name !== 'string'
  ) {
    throw new Error(`${source}: a document lacks apiVersion, kind or metadata.name`);
  }
  return o as KubeObject;
}

/** The rendering as `helm template` prints it. */
export function toYamlStream(manifests: readonly RenderedManifest[]): string {
  return manifests.map((m) => `---\n# Source: ${m.source}\n${m.content}\n`).join('');
}

/** The scenario values files in charts/platform-apiserver/ci, by name. */
export function scenarioFiles(): string[] {
  const dir = join(chartDir(), 'ci');
  return readdirSync(dir)
    .filter((f) => f.endsWith('-values.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

function main(argv: string[]): number {
  const opts: {
    valueFiles: string[];
    apiVersions: string[];
    name?: string;
    namespace?: string;
    lookup?: unknown[];
  } = {
    valueFiles: [],
    apiVersions: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) {
      console.error(`${flag ?? ''} needs a value`);
      return 2;
    }
    i++;
    if (flag === '-f' || flag === '--values') opts.valueFiles.push(value);
    else if (flag === '--name') opts.name = value;
    else if (flag === '--namespace' || flag === '-n') opts.namespace = value;
    else if (flag === '--api-versions') opts.apiVersions.push(value);
    else if (flag === '--lookup')
      opts.lookup = YAML.parseAllDocuments(readFileSync(value, 'utf8')).map((d) => d.toJS() as unknown);
    else {
      console.error(`unknown flag ${flag ?? ''}`);
      return 2;
    }
  }
  const r = renderChart(opts);
  if (!r.ok) {
    console.error(r.error);
    return 1;
  }
  process.stdout.write(toYamlStream(r.manifests));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
