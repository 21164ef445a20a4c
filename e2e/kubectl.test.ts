// What a user does with kubectl against the server, once on each storage backend.
// Every assertion is about what the user sees (kubectl's output and exit code) or
// what the server then holds (read back over HTTPS), never about internals.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { parseJsonStream } from './json-stream.js';
import { parseTable } from './kubectl-table.js';
import { backends, GROUP, GROUP_VERSION, kubectlMinorVersion, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import type { CommandResult } from './commands.js';
import { fieldNames, fieldSchema, normalizeSpace } from './openapi.js';
import type { OpenAPIV3Doc } from './openapi.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;

interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
}

function team(name: string, spec: Record<string, unknown> = {}, meta: Partial<ObjectMeta> = {}): KubeObject {
  return { apiVersion: GROUP_VERSION, kind: 'Team', metadata: { name, ...meta }, spec };
}

function sharedSecret(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'SharedSecret',
    metadata: { name, namespace },
    spec: { displayName: `Secret ${name}`, data },
  };
}

// kubectl before 1.27 reads OpenAPI v2 only, and only as protobuf; when the server
// does not serve that, kubectl's validation and explain fail with a bare NotFound.
let kubectlMinor = 0;
function hint(r: CommandResult): string {
  if (kubectlMinor >= 27 || !r.stderr.includes('the server could not find the requested resource')) return '';
  return `\n(kubectl 1.${kubectlMinor} fetches /openapi/v2 as protobuf; a 406 there makes it fail like this)`;
}

function ok(r: CommandResult, what: string): void {
  assert.equal(
    r.code,
    0,
    `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}${hint(r)}`,
  );
}

function failed(r: CommandResult, what: string): void {
  assert.notEqual(r.code, 0, `${what} should have failed\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

for (const backend of backends()) {
  describe(`kubectl against the server on ${backend}`, () => {
    let s: TestServer;

    before(async () => {
      kubectlMinor = await kubectlMinorVersion();
      s = await startServer({ backend });
    });
    after(async () => {
      await s?.stop();
    });

    async function create(obj: KubeObject): Promise<void> {
      ok(
        await s.kubectl(['create', '-f', '-'], { input: toYaml(obj) }),
        `kubectl create ${obj.kind} ${obj.metadata.name}`,
      );
    }

    /** The object as the server holds it, or undefined when it does not exist. */
    async function read(resource: string, name: string, namespace?: string): Promise<KubeObject | undefined> {
      const path = namespace
        ? `${V1}/namespaces/${namespace}/${resource}/${name}`
        : `${V1}/${resource}/${name}`;
      const r = await s.api('GET', path);
      if (r.status === 404) return undefined;
      assert.equal(r.status, 200, `GET ${path}: ${r.text}`);
      return r.json<KubeObject>();
    }

    async function mustRead(resource: string, name: string, namespace?: string): Promise<KubeObject> {
      const obj = await read(resource, name, namespace);
      assert.ok(obj, `${resource} ${name} should exist`);
      return obj;
    }

    it('api-resources lists the five kinds with their names, scope and kinds', TEST, async () => {
      const r = await s.kubectl(['api-resources', '--api-group', GROUP, '-o', 'wide']);
      ok(r, 'kubectl api-resources');
      const table = parseTable(r.stdout);
      // kubectl ≥ 1.20 prints APIVERSION; older ones APIGROUP.
      const groupColumn = table.headers.includes('APIVERSION') ? 'APIVERSION' : 'APIGROUP';
      const expectedGroup = groupColumn === 'APIVERSION' ? GROUP_VERSION : GROUP;
      const expected = [
        { name: 'sharedsecrets', namespaced: 'true', kind: 'SharedSecret' },
        { name: 'teams', namespaced: 'false', kind: 'Team' },
        { name: 'users', namespaced: 'false', kind: 'User' },
        { name: 'ownedaccesskeys', namespaced: 'false', kind: 'OwnedAccessKey' },
        { name: 'virtualclusterinstances', namespaced: 'true', kind: 'VirtualClusterInstance' },
      ];
      for (const e of expected) {
        const row = table.rows.find((x) => x['NAME'] === e.name);
        assert.ok(row, `api-resources has no row for ${e.name}:\n${r.stdout}`);
        assert.equal(row['NAMESPACED'], e.namespaced, `${e.name} NAMESPACED`);
        assert.equal(row['KIND'], e.kind, `${e.name} KIND`);
        assert.equal(row[groupColumn], expectedGroup, `${e.name} ${groupColumn}`);
        assert.equal(row['SHORTNAMES'], '', `${e.name} has no short names upstream`);
        const verbs = (row['VERBS'] ?? '')
          .replace(/^\[|\]$/g, '')
          .split(/[\s,]+/)
          .filter(Boolean)
          .sort();
        assert.deepEqual(verbs, [
          'create',
          'delete',
          'deletecollection',
          'get',
          'list',
          'patch',
          'update',
          'watch',
        ]);
      }
      // The singular names resolve too (kubectl maps them through discovery).
      ok(await s.kubectl(['get', 'sharedsecret', '-A']), 'kubectl get sharedsecret');
      ok(await s.kubectl(['get', 'ownedaccesskey']), 'kubectl get ownedaccesskey');
    });

    it('explain shows the description of sharedsecret.spec.data from the schema', TEST, async () => {
      const doc = (await s.api('GET', `/openapi/v3/apis/${GROUP}/v1`)).json<OpenAPIV3Doc>();
      const description = fieldSchema(doc, GROUP, 'SharedSecret', 'spec.data')['description'];
      assert.ok(typeof description === 'string' && description.trim() !== '', 'spec.data has a description');

      const r = await s.kubectl(['explain', 'sharedsecret.spec.data']);
      ok(r, 'kubectl explain sharedsecret.spec.data');
      assert.match(r.stdout, /KIND:\s+SharedSecret/);
      assert.match(r.stdout, new RegExp(`VERSION:\\s+(${GROUP}/)?v1`));
      assert.match(r.stdout, /data\s+<map\[string\]string>/);
      assert.ok(
        normalizeSpace(r.stdout).includes(normalizeSpace(description)),
        `explain output lacks the schema's description "${description}":\n${r.stdout}`,
      );
    });

    it('explain user.spec --recursive lists every field of the User spec', TEST, async () => {
      const r = await s.kubectl(['explain', 'user.spec', '--recursive']);
      ok(r, 'kubectl explain user.spec --recursive');
      const listed = new Set(
        r.stdout
          .split('\n')
          .map((l) => /^\s+([A-Za-z][A-Za-z0-9]*)\s+<[^>]+>/.exec(l)?.[1])
          .filter((x): x is string => x !== undefined),
      );
      // Every field the specification gives a User...
      const fromSpec = [
        'displayName',
        'description',
        'owner',
        'username',
        'icon',
        'email',
        'subject',
        'groups',
        'ssoGroups',
        'passwordRef',
        'codesRef',
        'imagePullSecrets',
        'tokenGeneration',
        'disabled',
        'clusterRoles',
        'access',
        'extraClaims',
        // ...and nested ones: owner, secret references, access rules.
        'user',
        'team',
        'secretName',
        'secretNamespace',
        'key',
        'verbs',
        'users',
        'teams',
        'subresources',
      ];
      // ...and every field the server's own schema has.
      const doc = (await s.api('GET', `/openapi/v3/apis/${GROUP}/v1`)).json<OpenAPIV3Doc>();
      for (const field of [...fromSpec, ...fieldNames(doc, GROUP, 'User', 'spec')]) {
        assert.ok(listed.has(field), `explain --recursive does not list ${field}:\n${r.stdout}`);
      }
    });

    it('create -f - takes YAML on stdin', TEST, async () => {
      const obj = team(
        'e2e-create',
        { displayName: 'Created Team', users: ['alice'] },
        { labels: { suite: 'e2e' } },
      );
      const r = await s.kubectl(['create', '-f', '-'], { input: toYaml(obj) });
      ok(r, 'kubectl create');
      assert.match(r.stdout, new RegExp(`^team\\.${GROUP.replace(/\./g, '\\.')}/e2e-create created$`, 'm'));
      const stored = await mustRead('teams', 'e2e-create');
      assert.equal(stored.kind, 'Team');
      assert.equal(stored.apiVersion, GROUP_VERSION);
      assert.deepEqual(stored.spec, { displayName: 'Created Team', users: ['alice'] });
      assert.deepEqual(stored.metadata.labels, { suite: 'e2e' });
      assert.ok(stored.metadata.uid && stored.metadata.resourceVersion && stored.metadata.creationTimestamp);

      // Creating it again is a conflict kubectl reports as AlreadyExists.
      const again = await s.kubectl(['create', '-f', '-'], { input: toYaml(obj) });
      failed(again, 'a second create');
      assert.match(
        again.stderr,
        new RegExp(`\\(AlreadyExists\\).*teams\\.${GROUP.replace(/\./g, '\\.')} "e2e-create" already exists`),
      );
    });

    it('get prints a table with NAME, DISPLAY NAME and AGE', TEST, async () => {
      await create(team('e2e-table', { displayName: 'Table Team', users: ['u1', 'u2'] }));
      const r = await s.kubectl(['get', 'teams']);
      ok(r, 'kubectl get teams');
      const table = parseTable(r.stdout);
      assert.equal(table.headers[0], 'NAME');
      assert.ok(table.headers.includes('DISPLAY NAME'), `headers: ${table.headers.join(', ')}`);
      assert.equal(table.headers[table.headers.length - 1], 'AGE');
      const row = table.rows.find((x) => x['NAME'] === 'e2e-table');
      assert.ok(row, `no row for e2e-table:\n${r.stdout}`);
      assert.equal(row['DISPLAY NAME'], 'Table Team');
      assert.match(
        row['AGE'] ?? '',
        /^\d+(s|m|h|d|y)(\d+(s|m|h|d))?$/,
        `AGE is a human duration: ${row['AGE']}`,
      );

      // One object, and a namespaced kind in its namespace.
      const one = parseTable((await s.kubectl(['get', 'team', 'e2e-table'])).stdout);
      assert.deepEqual(
        one.rows.map((x) => x['NAME']),
        ['e2e-table'],
      );
      await create(sharedSecret('e2e-tables', 'db', { password: b64('pw') }));
      const ns = await s.kubectl(['get', 'sharedsecrets', '-n', 'e2e-tables']);
      ok(ns, 'kubectl get sharedsecrets -n');
      const nsTable = parseTable(ns.stdout);
      assert.deepEqual(
        nsTable.rows.map((x) => [x['NAME'], x['DISPLAY NAME']]),
        [['db', 'Secret db']],
      );

      // Nothing there: kubectl's own message, exit 0.
      const none = await s.kubectl(['get', 'sharedsecrets', '-n', 'e2e-empty']);
      ok(none, 'kubectl get in an empty namespace');
      assert.match(none.stderr, /No resources found in e2e-empty namespace\./);
    });

    it('get virtualclusterinstances -A prints project, cluster and ingress columns', TEST, async () => {
      await create({
        apiVersion: GROUP_VERSION,
        kind: 'VirtualClusterInstance',
        metadata: { name: 'dev', namespace: 'p-e2e-vci' },
        spec: {
          displayName: 'Dev cluster',
          clusterRef: { cluster: 'east', namespace: 'vc-dev', virtualCluster: 'dev' },
          template: { accessPoint: { ingress: { enabled: true } } },
        },
      });
      const r = await s.kubectl(['get', 'virtualclusterinstances', '-A']);
      ok(r, 'kubectl get virtualclusterinstances -A');
      const table = parseTable(r.stdout);
      const row = table.rows.find((x) => x['NAME'] === 'dev' && x['NAMESPACE'] === 'p-e2e-vci');
      assert.ok(row, `no row for p-e2e-vci/dev:\n${r.stdout}`);
      assert.equal(row['DISPLAY NAME'], 'Dev cluster');
      assert.equal(row['PROJECT'], 'e2e-vci');
      assert.equal(row['CLUSTER'], 'east');
      assert.equal(row['INGRESS'], 'true');

      // The server mirrors the template into status.virtualCluster, where clients read it.
      const stored = await mustRead('virtualclusterinstances', 'dev', 'p-e2e-vci');
      assert.deepEqual((stored as { status?: unknown }).status, {
        virtualCluster: { accessPoint: { ingress: { enabled: true } } },
      });
    });

    it('get -o yaml and -o json return every field that was created', TEST, async () => {
      const spec = {
        displayName: 'Round Trip',
        description: 'Every field comes back',
        username: 'roundtrip',
        users: ['alice', 'bob'],
        groups: ['devs'],
        clusterRoles: [{ name: 'view' }],
        access: [{ name: 'readers', verbs: ['get', 'list'], users: ['alice'], teams: ['ops'] }],
      };
      const meta = { labels: { tier: 'gold' }, annotations: { 'example.com/note': 'hello: world' } };
      await create(team('e2e-roundtrip', spec, meta));

      const y = await s.kubectl(['get', 'team', 'e2e-roundtrip', '-o', 'yaml']);
      ok(y, 'kubectl get -o yaml');
      const j = await s.kubectl(['get', 'team', 'e2e-roundtrip', '-o', 'json']);
      ok(j, 'kubectl get -o json');
      const fromYaml = parseYaml(y.stdout) as KubeObject;
      const fromJson = JSON.parse(j.stdout) as KubeObject;
      for (const got of [fromYaml, fromJson]) {
        assert.equal(got.apiVersion, GROUP_VERSION);
        assert.equal(got.kind, 'Team');
        assert.equal(got.metadata.name, 'e2e-roundtrip');
        assert.deepEqual(got.metadata.labels, meta.labels);
        assert.equal(got.metadata.annotations?.['example.com/note'], 'hello: world');
        assert.deepEqual(got.spec, spec);
        assert.match(got.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
        assert.match(got.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.equal(got.metadata.generation, 1);
      }
      assert.deepEqual(fromYaml, fromJson);

      // The YAML kubectl printed is itself valid input: replacing with it succeeds
      // and changes nothing the user wrote.
      const replaced = await s.kubectl(['replace', '-f', '-'], { input: y.stdout });
      ok(replaced, 'kubectl replace with the YAML from get');
      assert.deepEqual((await mustRead('teams', 'e2e-roundtrip')).spec, spec);
    });

    it('apply twice: the second apply is unchanged and keeps the resourceVersion', TEST, async () => {
      const obj = team('e2e-apply', { displayName: 'Applied', groups: ['a'] });
      const first = await s.kubectl(['apply', '-f', '-'], { input: toYaml(obj) });
      ok(first, 'first apply');
      assert.match(first.stdout, /team\.management\.platform\.dev\/e2e-apply created/);
      const rv1 = (await mustRead('teams', 'e2e-apply')).metadata.resourceVersion;

      const second = await s.kubectl(['apply', '-f', '-'], { input: toYaml(obj) });
      ok(second, 'second apply');
      assert.match(second.stdout, /team\.management\.platform\.dev\/e2e-apply unchanged/);
      const afterSecond = await mustRead('teams', 'e2e-apply');
      assert.equal(afterSecond.metadata.resourceVersion, rv1, 'an unchanged apply must not write');

      // A changed manifest is configured: the field changes, a field dropped from the
      // manifest is removed (three-way merge through last-applied-configuration).
      const changed = team('e2e-apply', { displayName: 'Applied again' });
      const third = await s.kubectl(['apply', '-f', '-'], { input: toYaml(changed) });
      ok(third, 'third apply');
      assert.match(third.stdout, /team\.management\.platform\.dev\/e2e-apply configured/);
      const stored = await mustRead('teams', 'e2e-apply');
      assert.notEqual(stored.metadata.resourceVersion, rv1);
      assert.deepEqual(stored.spec, { displayName: 'Applied again' });
      assert.ok(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']);
    });

    it('label and annotate add, overwrite and remove metadata', TEST, async () => {
      await create(team('e2e-label', { displayName: 'Labels' }));
      const labeled = await s.kubectl(['label', 'team', 'e2e-label', 'tier=gold']);
      ok(labeled, 'kubectl label');
      assert.match(labeled.stdout, /team\.management\.platform\.dev\/e2e-label labeled/);
      assert.equal((await mustRead('teams', 'e2e-label')).metadata.labels?.['tier'], 'gold');

      const noOverwrite = await s.kubectl(['label', 'team', 'e2e-label', 'tier=silver']);
      failed(noOverwrite, 'relabel without --overwrite');
      assert.match(noOverwrite.stderr, /'tier' already has a value \(gold\), and --overwrite is false/);
      ok(await s.kubectl(['label', 'team', 'e2e-label', 'tier=silver', '--overwrite']), 'label --overwrite');
      assert.equal((await mustRead('teams', 'e2e-label')).metadata.labels?.['tier'], 'silver');

      // Selecting by the label finds it.
      const selected = parseTable((await s.kubectl(['get', 'teams', '-l', 'tier=silver'])).stdout);
      assert.deepEqual(
        selected.rows.map((x) => x['NAME']),
        ['e2e-label'],
      );

      ok(await s.kubectl(['label', 'team', 'e2e-label', 'tier-']), 'remove the label');
      assert.equal((await mustRead('teams', 'e2e-label')).metadata.labels?.['tier'], undefined);

      const annotated = await s.kubectl(['annotate', 'team', 'e2e-label', 'example.com/owner=ops']);
      ok(annotated, 'kubectl annotate');
      assert.match(annotated.stdout, /team\.management\.platform\.dev\/e2e-label annotated/);
      assert.equal((await mustRead('teams', 'e2e-label')).metadata.annotations?.['example.com/owner'], 'ops');
      ok(await s.kubectl(['annotate', 'team', 'e2e-label', 'example.com/owner-']), 'remove the annotation');
      assert.equal(
        (await mustRead('teams', 'e2e-label')).metadata.annotations?.['example.com/owner'],
        undefined,
      );
    });

    it('patch with --type json, --type merge and the default strategic type', TEST, async () => {
      await create(team('e2e-patch', { displayName: 'Before', users: ['alice'] }));

      const json = await s.kubectl([
        'patch',
        'team',
        'e2e-patch',
        '--type',
        'json',
        '-p',
        JSON.stringify([
          { op: 'add', path: '/spec/users/-', value: 'bob' },
          { op: 'add', path: '/spec/groups', value: ['devs'] },
        ]),
      ]);
      ok(json, 'patch --type json');
      assert.match(json.stdout, /team\.management\.platform\.dev\/e2e-patch patched/);
      assert.deepEqual((await mustRead('teams', 'e2e-patch')).spec, {
        displayName: 'Before',
        users: ['alice', 'bob'],
        groups: ['devs'],
      });

      const merge = await s.kubectl([
        'patch',
        'team',
        'e2e-patch',
        '--type',
        'merge',
        '-p',
        '{"spec":{"displayName":"Merged","groups":null}}',
      ]);
      ok(merge, 'patch --type merge');
      assert.deepEqual((await mustRead('teams', 'e2e-patch')).spec, {
        displayName: 'Merged',
        users: ['alice', 'bob'],
      });

      const strategic = await s.kubectl([
        'patch',
        'team',
        'e2e-patch',
        '-p',
        '{"spec":{"description":"Strategic","users":["carol"]}}',
      ]);
      ok(strategic, 'patch (strategic, the default)');
      assert.match(strategic.stdout, /team\.management\.platform\.dev\/e2e-patch patched/);
      // spec.users is a set (x-kubernetes-list-type: set): a strategic merge adds to it.
      assert.deepEqual((await mustRead('teams', 'e2e-patch')).spec, {
        displayName: 'Merged',
        description: 'Strategic',
        users: ['alice', 'bob', 'carol'],
      });

      // A JSON patch whose test fails is refused and changes nothing.
      const before = await mustRead('teams', 'e2e-patch');
      const refused = await s.kubectl([
        'patch',
        'team',
        'e2e-patch',
        '--type',
        'json',
        '-p',
        '[{"op":"test","path":"/spec/displayName","value":"Wrong"},{"op":"replace","path":"/spec/displayName","value":"X"}]',
      ]);
      failed(refused, 'a JSON patch with a failing test');
      // kubectl prints an Invalid error without kind and name as "The request is invalid: <causes>".
      assert.match(refused.stderr, /The request is invalid/);
      assert.equal(
        (await mustRead('teams', 'e2e-patch')).metadata.resourceVersion,
        before.metadata.resourceVersion,
      );
      // On the wire it is upstream's generic 422.
      const raw = await s.api(
        'PATCH',
        `${V1}/teams/e2e-patch`,
        [{ op: 'test', path: '/spec/displayName', value: 'Wrong' }],
        { 'Content-Type': 'application/json-patch+json' },
      );
      assert.equal(raw.status, 422, raw.text);
      const status = raw.json<{ reason: string; message: string }>();
      assert.equal(status.reason, 'Invalid');
      assert.equal(status.message, 'the server rejected our request due to an error in our request');

      const missing = await s.kubectl([
        'patch',
        'team',
        'e2e-no-such-team',
        '--type',
        'merge',
        '-p',
        '{"spec":{}}',
      ]);
      failed(missing, 'patching a missing object');
      assert.match(
        missing.stderr,
        /\(NotFound\).*teams\.management\.platform\.dev "e2e-no-such-team" not found/,
      );
    });

    it('replace with a stale resourceVersion fails with a Conflict and changes nothing', TEST, async () => {
      await create(team('e2e-replace', { displayName: 'Original' }));
      const stale = (await s.kubectl(['get', 'team', 'e2e-replace', '-o', 'yaml'])).stdout;
      ok(
        await s.kubectl([
          'patch',
          'team',
          'e2e-replace',
          '--type',
          'merge',
          '-p',
          '{"spec":{"displayName":"Newer"}}',
        ]),
        'patch',
      );
      const current = await mustRead('teams', 'e2e-replace');

      const edited = parseYaml(stale) as KubeObject;
      edited.spec = { ...edited.spec, displayName: 'From stale copy' };
      const r = await s.kubectl(['replace', '-f', '-'], { input: toYaml(edited) });
      failed(r, 'replace with a stale resourceVersion');
      assert.match(r.stderr, /\(Conflict\)/);
      assert.match(
        r.stderr,
        /Operation cannot be fulfilled on teams\.management\.platform\.dev "e2e-replace": the object has been modified; please apply your changes to the latest version and try again/,
      );
      const after = await mustRead('teams', 'e2e-replace');
      assert.equal(after.metadata.resourceVersion, current.metadata.resourceVersion);
      assert.equal(after.spec?.['displayName'], 'Newer');

      // With the current resourceVersion the same replace goes through.
      edited.metadata.resourceVersion = current.metadata.resourceVersion;
      const fresh = await s.kubectl(['replace', '-f', '-'], { input: toYaml(edited) });
      ok(fresh, 'replace with the current resourceVersion');
      assert.match(fresh.stdout, /team\.management\.platform\.dev\/e2e-replace replaced/);
      assert.equal((await mustRead('teams', 'e2e-replace')).spec?.['displayName'], 'From stale copy');
    });

    it('delete without finalizers removes the object', TEST, async () => {
      await create(team('e2e-delete', { displayName: 'Doomed' }));
      const r = await s.kubectl(['delete', 'team', 'e2e-delete']);
      ok(r, 'kubectl delete');
      assert.match(r.stdout, /team\.management\.platform\.dev "e2e-delete" deleted/);
      assert.equal(await read('teams', 'e2e-delete'), undefined);

      const get = await s.kubectl(['get', 'team', 'e2e-delete']);
      failed(get, 'get after delete');
      assert.match(
        get.stderr,
        /Error from server \(NotFound\): teams\.management\.platform\.dev "e2e-delete" not found/,
      );

      const again = await s.kubectl(['delete', 'team', 'e2e-delete']);
      failed(again, 'deleting it again');
      assert.match(again.stderr, /\(NotFound\).*"e2e-delete" not found/);

      // A namespaced kind, deleted by file.
      const secret = sharedSecret('e2e-delete-ns', 'gone', { k: b64('v') });
      await create(secret);
      ok(await s.kubectl(['delete', '-f', '-'], { input: toYaml(secret) }), 'kubectl delete -f -');
      assert.equal(await read('sharedsecrets', 'gone', 'e2e-delete-ns'), undefined);
    });

    it('delete with a finalizer keeps the object until a patch removes the finalizer', TEST, async () => {
      await create(team('e2e-finalizer', { displayName: 'Held' }, { finalizers: ['e2e.platform.dev/hold'] }));
      const del = await s.kubectl(['delete', 'team', 'e2e-finalizer', '--wait=false']);
      ok(del, 'kubectl delete --wait=false');
      assert.match(del.stdout, /team\.management\.platform\.dev "e2e-finalizer" deleted/);

      const held = JSON.parse(
        (await s.kubectl(['get', 'team', 'e2e-finalizer', '-o', 'json'])).stdout,
      ) as KubeObject;
      assert.match(held.metadata.deletionTimestamp ?? '', /^\d{4}-\d\d-\d\dT/, 'deletionTimestamp is set');
      assert.deepEqual(held.metadata.finalizers, ['e2e.platform.dev/hold']);
      assert.deepEqual(held.spec, { displayName: 'Held' });

      // While terminating, no new finalizer may be added.
      const add = await s.kubectl([
        'patch',
        'team',
        'e2e-finalizer',
        '--type',
        'merge',
        '-p',
        '{"metadata":{"finalizers":["e2e.platform.dev/hold","e2e.platform.dev/more"]}}',
      ]);
      failed(add, 'adding a finalizer to a terminating object');
      assert.match(add.stderr, /Forbidden: no new finalizers can be added if the object is being deleted/);

      const patch = await s.kubectl([
        'patch',
        'team',
        'e2e-finalizer',
        '--type',
        'json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      ]);
      ok(patch, 'removing the finalizer');
      assert.equal(
        await read('teams', 'e2e-finalizer'),
        undefined,
        'removing the last finalizer deletes the object',
      );
      const get = await s.kubectl(['get', 'team', 'e2e-finalizer']);
      failed(get, 'get after the finalizer is gone');
      assert.match(get.stderr, /\(NotFound\)/);
    });

    it('get -w sees ADDED, MODIFIED and DELETED events', TEST, async () => {
      await create(team('e2e-watch-sentinel', { displayName: 'Sentinel' }));
      const events = s.kubectlInBackground(['get', 'teams', '-w', '--output-watch-events', '-o', 'json']);
      const table = s.kubectlInBackground(['get', 'teams', '-w']);
      try {
        // The sentinel in the initial list proves each kubectl has listed; it then
        // watches from that list's resourceVersion, so nothing after it is missed.
        const eventsFor = (out: string, name: string): Array<{ type: string; object: KubeObject }> =>
          (parseJsonStream(out) as Array<{ type: string; object: KubeObject }>).filter(
            (e) => e.object?.metadata?.name === name,
          );
        await events.waitForOutput(
          (out) => eventsFor(out, 'e2e-watch-sentinel').length > 0,
          'the initial list',
        );
        await table.waitForOutput((out) => /^e2e-watch-sentinel\s/m.test(out), 'the initial table');

        await create(team('e2e-watch', { displayName: 'Watched' }));
        ok(await s.kubectl(['label', 'team', 'e2e-watch', 'watched=yes']), 'label');
        ok(await s.kubectl(['delete', 'team', 'e2e-watch']), 'delete');

        await events.waitForOutput(
          (out) => eventsFor(out, 'e2e-watch').some((e) => e.type === 'DELETED'),
          'the DELETED event',
        );
        const seen = eventsFor(events.stdout(), 'e2e-watch');
        assert.deepEqual(
          seen.map((e) => e.type),
          ['ADDED', 'MODIFIED', 'DELETED'],
        );
        assert.equal(seen[1]?.object.metadata.labels?.['watched'], 'yes');
        const rvs = seen.map((e) => Number(e.object.metadata.resourceVersion));
        assert.ok(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `resourceVersions increase: ${rvs.join(', ')}`);
        assert.deepEqual(
          eventsFor(events.stdout(), 'e2e-watch-sentinel').map((e) => e.type),
          ['ADDED'],
        );

        // The table watch prints one row per event.
        await table.waitForOutput(
          (out) => (out.match(/^e2e-watch\s/gm) ?? []).length >= 3,
          'three table rows',
        );
        assert.equal(table.stderr().trim(), '', `table watch wrote errors: ${table.stderr()}`);
        assert.ok(!events.hasExited() && !table.hasExited(), 'the watches stay open');
      } finally {
        await events.stop();
        await table.stop();
      }
    });

    it('wait --for=delete returns once the object is gone', TEST, async () => {
      await create(team('e2e-wait', { displayName: 'Awaited' }, { finalizers: ['e2e.platform.dev/hold'] }));
      ok(await s.kubectl(['delete', 'team', 'e2e-wait', '--wait=false']), 'delete --wait=false');
      // -v=6 logs each request once its response headers arrive: the watch's "200 OK"
      // line proves kubectl is waiting on a live watch, not on a lucky first GET.
      const wait = s.kubectlInBackground(['wait', '--for=delete', 'team/e2e-wait', '--timeout=90s', '-v=6']);
      try {
        await wait.waitForOutput(
          (_out, err) => /teams\?\S*watch=(true|1).*200 OK/.test(err),
          'the watch to start',
        );
        assert.ok(
          !wait.hasExited(),
          'kubectl wait must still be waiting while the finalizer holds the object',
        );
        ok(
          await s.kubectl([
            'patch',
            'team',
            'e2e-wait',
            '--type',
            'merge',
            '-p',
            '{"metadata":{"finalizers":null}}',
          ]),
          'finalizer removal',
        );
        const r = await wait.exited;
        assert.equal(r.code, 0, `kubectl wait failed:\n${r.stdout}\n${r.stderr.slice(-3000)}`);
        assert.match(r.stdout, /team\.management\.platform\.dev\/e2e-wait condition met/);
      } finally {
        await wait.stop();
      }
    });

    it('SharedSecrets in two namespaces are listed together with -A', TEST, async () => {
      await create(sharedSecret('e2e-ns-a', 'shared', { token: b64('a') }));
      await create(sharedSecret('e2e-ns-b', 'shared', { token: b64('b'), extra: b64('x') }));
      const r = await s.kubectl(['get', 'sharedsecrets', '-A']);
      ok(r, 'kubectl get sharedsecrets -A');
      const table = parseTable(r.stdout);
      assert.equal(table.headers[0], 'NAMESPACE');
      assert.equal(table.headers[1], 'NAME');
      const rows = table.rows.filter((x) => x['NAME'] === 'shared').map((x) => x['NAMESPACE']);
      assert.deepEqual(rows, ['e2e-ns-a', 'e2e-ns-b']);

      const onlyA = parseTable((await s.kubectl(['get', 'sharedsecrets', '-n', 'e2e-ns-a'])).stdout);
      assert.deepEqual(
        onlyA.rows.map((x) => x['NAME']),
        ['shared'],
      );
      const b = await mustRead('sharedsecrets', 'shared', 'e2e-ns-b');
      assert.deepEqual(b.spec?.['data'], { token: b64('b'), extra: b64('x') });
      const list = JSON.parse((await s.kubectl(['get', 'sharedsecrets', '-A', '-o', 'json'])).stdout) as {
        items: KubeObject[];
      };
      assert.deepEqual(
        list.items.filter((i) => i.metadata.name === 'shared').map((i) => i.metadata.namespace),
        ['e2e-ns-a', 'e2e-ns-b'],
      );
    });

    it('create with generateName gets a generated, unique name', TEST, async () => {
      const obj = {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { generateName: 'e2e-gen-' },
        spec: { displayName: 'Generated' },
      };
      const names: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await s.kubectl(['create', '-f', '-'], { input: toYaml(obj) });
        ok(r, 'kubectl create with generateName');
        const m = /team\.management\.platform\.dev\/(e2e-gen-[bcdfghjklmnpqrstvwxz2456789]{5}) created/.exec(
          r.stdout,
        );
        assert.ok(m?.[1], `generated name not in: ${r.stdout}`);
        names.push(m[1]);
      }
      assert.notEqual(names[0], names[1]);
      for (const name of names) {
        const stored = await mustRead('teams', name);
        assert.equal(stored.metadata.generateName, 'e2e-gen-');
        assert.deepEqual(stored.spec, { displayName: 'Generated' });
      }
    });

    it('a bad token gets 401 and kubectl says to log in', TEST, async () => {
      const r = await s.kubectl(['--token', 'not-a-real-key', 'get', 'teams']);
      failed(r, 'kubectl with a bad token');
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^error: You must be logged in to the server \(Unauthorized\)$/m);
      assert.equal(r.stdout, '');

      const raw = await s.api('GET', `${V1}/teams`, undefined, { Authorization: 'Bearer not-a-real-key' });
      assert.equal(raw.status, 401);
      const status = raw.json<{ kind: string; status: string; reason: string; code: number }>();
      assert.deepEqual(
        [status.kind, status.status, status.reason, status.code],
        ['Status', 'Failure', 'Unauthorized', 401],
      );
    });

    it('kubectl reports invalid objects with the field that is wrong', TEST, async () => {
      const bad = sharedSecret('e2e-invalid', 'bad', { 'not a key!': b64('v') });
      const r = await s.kubectl(['create', '-f', '-'], { input: toYaml(bad) });
      failed(r, 'creating an invalid SharedSecret');
      // kubectl rewrites Invalid errors as `The <Kind> "<name>" is invalid: <field>: <problem>`.
      assert.match(
        r.stderr,
        /The SharedSecret "bad" is invalid: [\s\S]*spec\.data\[not a key!\]: Invalid value/,
      );
      assert.equal(await read('sharedsecrets', 'bad', 'e2e-invalid'), undefined);
    });
  });
}
