// Server-side apply as real clients use it, on each storage backend (through the
// watch cache, the server's default): kubectl's --server-side flows (twice,
// conflicts, --force-conflicts, --dry-run=server, diff, --show-managed-fields,
// migration from client-side apply), Debian's Python client, @kubernetes/client-node,
// and the requests Flux's kustomize-controller and Helm 4 send.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { runCommand, type CommandResult } from './commands.js';
import {
  backends,
  GROUP,
  GROUP_VERSION,
  kubectlMinorVersion,
  startServer,
  type TestServer,
} from './harness.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;
const APPLY = 'application/apply-patch+yaml';

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  fieldsV1?: Record<string, unknown>;
}

interface Team {
  metadata: {
    name: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  spec: { displayName?: string; description?: string };
}

function team(
  name: string,
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return { apiVersion: GROUP_VERSION, kind: 'Team', metadata: { name, ...metadata }, spec };
}

function ok(r: CommandResult, what: string): void {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

/** Which managers own spec.<field>, as "manager/Operation". */
function ownersOf(obj: Team, field: string): string[] {
  return (obj.metadata.managedFields ?? [])
    .filter((e) => {
      const spec = e.fieldsV1?.['f:spec'];
      return typeof spec === 'object' && spec !== null && `f:${field}` in spec;
    })
    .map((e) => `${e.manager}/${e.operation}`)
    .sort();
}

for (const backend of backends()) {
  describe(`server-side apply on ${backend}`, () => {
    let s: TestServer;
    let kubectlMinor = 0;

    before(async () => {
      kubectlMinor = await kubectlMinorVersion();
      s = await startServer({ backend });
    });
    after(async () => {
      await s?.stop();
    });

    async function read(name: string): Promise<Team> {
      const r = await s.api('GET', `${V1}/teams/${name}`);
      assert.equal(r.status, 200, r.text);
      return r.json<Team>();
    }

    function kubectlApply(obj: Record<string, unknown>, ...flags: string[]): Promise<CommandResult> {
      return s.kubectl(['apply', '--server-side', ...flags, '-f', '-'], { input: toYaml(obj) });
    }

    it(
      'kubectl apply --server-side creates, and a second identical apply changes nothing',
      TEST,
      async () => {
        const obj = team('ssa-a', { displayName: 'A', description: 'first' });
        const first = await kubectlApply(obj);
        ok(first, 'kubectl apply --server-side');
        assert.match(first.stdout, /team\.management\.platform\.dev\/ssa-a serverside-applied/);
        const created = await read('ssa-a');
        assert.deepEqual(ownersOf(created, 'displayName'), ['kubectl/Apply']);
        ok(await kubectlApply(obj), 'second kubectl apply --server-side');
        const again = await read('ssa-a');
        assert.equal(again.metadata.resourceVersion, created.metadata.resourceVersion);
      },
    );

    it(
      'a second field manager conflicts, kubectl shows the conflict and the --force-conflicts hint; forcing takes the field',
      TEST,
      async () => {
        ok(await kubectlApply(team('ssa-b', { displayName: 'B' })), 'first apply');
        const other = team('ssa-b', { displayName: 'B by CI' });
        const conflict = await kubectlApply(other, '--field-manager=ci-pipeline');
        assert.notEqual(conflict.code, 0, conflict.stdout);
        assert.match(
          conflict.stderr,
          /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.displayName/,
        );
        assert.match(conflict.stderr, /--force-conflicts/);
        assert.equal((await read('ssa-b')).spec.displayName, 'B');
        ok(
          await kubectlApply(other, '--field-manager=ci-pipeline', '--force-conflicts'),
          'apply --force-conflicts',
        );
        const forced = await read('ssa-b');
        assert.equal(forced.spec.displayName, 'B by CI');
        assert.deepEqual(ownersOf(forced, 'displayName'), ['ci-pipeline/Apply']);
      },
    );

    it('--dry-run=server and kubectl diff --server-side change nothing', TEST, async () => {
      ok(await kubectlApply(team('ssa-c', { displayName: 'C' })), 'apply');
      const before = await read('ssa-c');
      const changed = team('ssa-c', { displayName: 'C2' });
      const dry = await kubectlApply(changed, '--dry-run=server');
      ok(dry, 'apply --dry-run=server');
      assert.match(dry.stdout, /serverside-applied \(server dry run\)/);
      const diff = await s.kubectl(['diff', '--server-side', '-f', '-'], { input: toYaml(changed) });
      assert.equal(
        diff.code,
        1,
        `kubectl diff exits 1 when there are differences\n${diff.stdout}\n${diff.stderr}`,
      );
      assert.match(diff.stdout, /-\s+displayName: C\n/);
      assert.match(diff.stdout, /\+\s+displayName: C2\n/);
      const same = await s.kubectl(['diff', '--server-side', '-f', '-'], {
        input: toYaml(team('ssa-c', { displayName: 'C' })),
      });
      assert.equal(same.code, 0, `${same.stdout}\n${same.stderr}`);
      const after = await read('ssa-c');
      assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
      assert.equal(after.spec.displayName, 'C');
    });

    it('kubectl get --show-managed-fields shows who owns what', TEST, async () => {
      ok(await kubectlApply(team('ssa-d', { displayName: 'D' })), 'apply');
      // kubectl hides managedFields from -o yaml since 1.21 (kubernetes#96878), which
      // added the flag; 1.20 has no flag and always prints them.
      const hides = kubectlMinor >= 21;
      const r = await s.kubectl([
        'get',
        'teams',
        'ssa-d',
        ...(hides ? ['--show-managed-fields'] : []),
        '-o',
        'yaml',
      ]);
      ok(r, 'kubectl get --show-managed-fields');
      assert.match(r.stdout, /managedFields:/);
      assert.match(r.stdout, /manager: kubectl\n\s+operation: Apply/);
      assert.match(r.stdout, /f:displayName: \{\}/);
      if (hides) {
        const plain = await s.kubectl(['get', 'teams', 'ssa-d', '-o', 'yaml']);
        assert.doesNotMatch(plain.stdout, /managedFields:/);
      }
    });

    it(
      'what the server adds on create is owned by no manager, so another applier takes it without a conflict',
      TEST,
      async () => {
        // A key for a user: the server adds the owner reference to the User and its own
        // annotations. As kube-apiserver records a create before the strategy runs, the
        // creator owns only what it sent.
        ok(
          await s.kubectl(['create', '-f', '-'], {
            input: toYaml({
              apiVersion: GROUP_VERSION,
              kind: 'User',
              metadata: { name: 'ssa-owner' },
              spec: { username: 'ssa-owner' },
            }),
          }),
          'kubectl create user',
        );
        const key = { apiVersion: GROUP_VERSION, kind: 'OwnedAccessKey', metadata: { name: 'ssa-key' } };
        ok(
          await s.kubectl(['create', '-f', '-'], {
            input: toYaml({ ...key, spec: { user: 'ssa-owner', displayName: 'K' } }),
          }),
          'kubectl create key',
        );
        const r = await s.kubectl([
          'get',
          'ownedaccesskeys',
          'ssa-key',
          ...(kubectlMinor >= 21 ? ['--show-managed-fields'] : []),
          '-o',
          'json',
        ]);
        ok(r, 'kubectl get --show-managed-fields');
        const created = JSON.parse(r.stdout) as Team & {
          metadata: { ownerReferences?: { kind: string; name: string }[] };
        };
        assert.deepEqual(
          created.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`),
          ['User/ssa-owner'],
          'the server added the owner reference',
        );
        assert.ok(
          Object.keys(created.metadata.annotations ?? {}).length > 0,
          'the server added its annotations',
        );
        const entries = created.metadata.managedFields ?? [];
        assert.deepEqual(
          entries.map((e) => `${e.manager}/${e.operation}`),
          ['kubectl-create/Update'],
        );
        assert.deepEqual(Object.keys(entries[0]?.fieldsV1 ?? {}), ['f:spec'], JSON.stringify(entries));
        // A GitOps tool applying the key with its own label and the same owner reference,
        // blockOwnerDeletion changed: no one owned it, so no conflict.
        const ref = { ...created.metadata.ownerReferences?.[0], blockOwnerDeletion: false };
        const applied = await s.kubectl(['apply', '--server-side', '--field-manager=gitops', '-f', '-'], {
          input: toYaml({
            ...key,
            metadata: { name: 'ssa-key', labels: { tier: 'ci' }, ownerReferences: [ref] },
            spec: { user: 'ssa-owner' },
          }),
        });
        ok(applied, 'kubectl apply --server-side --field-manager=gitops');
      },
    );

    it(
      'kubectl patch that duplicates an owner reference warns, writes, and takes the reference from its applier',
      TEST,
      async () => {
        const user = { apiVersion: GROUP_VERSION, kind: 'User', metadata: { name: 'dup-owner' } };
        ok(
          await s.kubectl(['create', '-f', '-'], {
            input: toYaml({ ...user, spec: { username: 'dup-owner' } }),
          }),
          'kubectl create user',
        );
        const key = { apiVersion: GROUP_VERSION, kind: 'OwnedAccessKey', metadata: { name: 'dup-key' } };
        ok(
          await s.kubectl(['create', '-f', '-'], { input: toYaml({ ...key, spec: { user: 'dup-owner' } }) }),
          'kubectl create key',
        );
        type Key = Team & { metadata: { ownerReferences?: Record<string, unknown>[] } };
        const readKey = async (): Promise<Key> => {
          const r = await s.api('GET', `${V1}/ownedaccesskeys/dup-key`);
          assert.equal(r.status, 200, r.text);
          return r.json<Key>();
        };
        const ref = (await readKey()).metadata.ownerReferences?.[0];
        assert.ok(ref, 'the server added the owner reference');
        ok(
          await s.kubectl(['apply', '--server-side', '--field-manager=gitops', '-f', '-'], {
            input: toYaml({
              ...key,
              metadata: { name: 'dup-key', ownerReferences: [ref] },
              spec: { user: 'dup-owner' },
            }),
          }),
          'kubectl apply --server-side --field-manager=gitops',
        );
        const before = await readKey();
        const refKey = `k:${JSON.stringify({ uid: ref['uid'] })}`;
        const ownsRef = (obj: Key, manager: string): unknown => {
          const entry = obj.metadata.managedFields?.find((e) => e.manager === manager);
          const meta = entry?.fieldsV1?.['f:metadata'] as Record<string, Record<string, unknown>> | undefined;
          return meta?.['f:ownerReferences']?.[refKey];
        };
        assert.ok(ownsRef(before, 'gitops'), JSON.stringify(before.metadata.managedFields));
        // A patch whose only change is a second copy of the reference.
        const patched = await s.kubectl([
          'patch',
          'ownedaccesskey',
          'dup-key',
          '--type=json',
          '-p',
          JSON.stringify([{ op: 'add', path: '/metadata/ownerReferences/-', value: ref }]),
        ]);
        ok(patched, 'kubectl patch --type=json');
        assert.match(
          patched.stderr,
          /Warning: \.metadata\.ownerReferences contains duplicate entries after mutating admission happens; .*duplicate UID\(s\) observed: /,
        );
        const after = await readKey();
        assert.deepEqual(after.metadata.ownerReferences, [ref], 'the duplicate is dropped');
        // kube-apiserver 1.32 records the duplicate (smd 4.4 owns it as one item) before
        // it dedups: the patcher now owns the reference, the applier no longer does, and
        // the changed managed fields are written.
        assert.notEqual(after.metadata.resourceVersion, before.metadata.resourceVersion);
        assert.deepEqual(ownsRef(after, 'kubectl-patch'), {}, JSON.stringify(after.metadata.managedFields));
        assert.equal(ownsRef(after, 'gitops'), undefined, JSON.stringify(after.metadata.managedFields));
      },
    );

    it(
      'an object made by client-side kubectl apply moves to server-side apply without conflicts',
      TEST,
      async () => {
        const csa = await s.kubectl(['apply', '-f', '-'], {
          input: toYaml(team('ssa-e', { displayName: 'E', description: 'csa' })),
        });
        ok(csa, 'client-side kubectl apply');
        const before = await read('ssa-e');
        assert.ok(before.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']);
        assert.deepEqual(ownersOf(before, 'displayName'), ['kubectl-client-side-apply/Update']);
        ok(
          await kubectlApply(team('ssa-e', { displayName: 'E2', description: 'csa' })),
          'kubectl apply --server-side',
        );
        const after = await read('ssa-e');
        assert.equal(after.spec.displayName, 'E2');
        // The server's part (lastappliedmanager.go): the conflicting fields the annotation
        // still describes go to kubectl's apply, forced, instead of a conflict.
        assert.deepEqual(ownersOf(after, 'displayName'), ['kubectl/Apply']);
        const managers = JSON.stringify(after.metadata.managedFields);
        if (kubectlMinor >= 26) {
          // kubectl 1.26+ first moves every field of the client-side apply manager to its
          // own (kubernetes#112905, csaupgrade), so that manager is gone.
          assert.deepEqual(ownersOf(after, 'description'), ['kubectl/Apply']);
          assert.ok(
            !(after.metadata.managedFields ?? []).some((e) => e.manager === 'kubectl-client-side-apply'),
            managers,
          );
        } else {
          // Older kubectl does not: a forced apply takes only the conflicting fields, so
          // the unchanged description stays shared with the client-side apply manager.
          assert.deepEqual(ownersOf(after, 'description'), [
            'kubectl-client-side-apply/Update',
            'kubectl/Apply',
          ]);
        }
      },
    );

    it('Debian’s Python client applies server-side', TEST, async () => {
      const script = [
        'import json, sys',
        'from kubernetes import config, dynamic',
        'from kubernetes.client import api_client',
        'config.load_kube_config(config_file=sys.argv[1])',
        'client = dynamic.DynamicClient(api_client.ApiClient())',
        `teams = client.resources.get(api_version=${JSON.stringify(GROUP_VERSION)}, kind="Team")`,
        // Debian's client (22.6) sends a text body as it is and refuses a dict under the apply
        // content type (later releases encode it): the configuration goes as text (JSON is YAML).
        'r = teams.server_side_apply(body=sys.argv[2], name="ssa-py", field_manager="python-client")',
        'print(json.dumps(r.to_dict()))',
      ].join('\n');
      const body = JSON.stringify(team('ssa-py', { displayName: 'From Python' }));
      const r = await runCommand('/usr/bin/python3', ['-c', script, s.kubeconfigPath, body]);
      ok(r, 'python3 server_side_apply');
      const out = JSON.parse(r.stdout) as Team;
      assert.equal(out.spec.displayName, 'From Python');
      assert.deepEqual(ownersOf(await read('ssa-py'), 'displayName'), ['python-client/Apply']);
    });

    it('@kubernetes/client-node patches with the apply content type', TEST, async () => {
      const kc = new KubeConfig();
      kc.loadFromFile(s.kubeconfigPath);
      const api = kc.makeApiClient(CustomObjectsApi);
      const out = (await api.patchClusterCustomObject(
        {
          group: GROUP,
          version: 'v1',
          plural: 'teams',
          name: 'ssa-node',
          body: team('ssa-node', { displayName: 'From Node' }),
          fieldManager: 'node-controller',
          force: true,
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      )) as Team;
      assert.equal(out.spec.displayName, 'From Node');
      assert.deepEqual(ownersOf(await read('ssa-node'), 'displayName'), ['node-controller/Apply']);
    });

    it(
      'Flux’s kustomize-controller sequence: a forced dry-run apply, then the forced apply',
      TEST,
      async () => {
        // What fluxcd/pkg/ssa sends through controller-runtime: the object as JSON, the
        // apply content type, the controller as forced field owner.
        const obj = team(
          'ssa-flux',
          { displayName: 'Flux' },
          {
            labels: {
              'kustomize.toolkit.fluxcd.io/name': 'apps',
              'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
            },
          },
        );
        const headers = {
          'content-type': APPLY,
          'user-agent': 'kustomize-controller/v1.5.0 (linux/amd64) kubernetes/abc',
        };
        const dry = await s.api(
          'PATCH',
          `${V1}/teams/ssa-flux?dryRun=All&fieldManager=kustomize-controller&force=true`,
          JSON.stringify(obj),
          headers,
        );
        assert.equal(dry.status, 201, dry.text);
        assert.equal((await s.api('GET', `${V1}/teams/ssa-flux`)).status, 404, 'a dry run stores nothing');
        const applied = await s.api(
          'PATCH',
          `${V1}/teams/ssa-flux?fieldManager=kustomize-controller&force=true`,
          JSON.stringify(obj),
          headers,
        );
        assert.equal(applied.status, 201, applied.text);
        const stored = await read('ssa-flux');
        assert.equal(stored.metadata.labels?.['kustomize.toolkit.fluxcd.io/name'], 'apps');
        assert.deepEqual(ownersOf(stored, 'displayName'), ['kustomize-controller/Apply']);
        // The next reconciliation's dry run finds nothing to change: same object back.
        const again = await s.api(
          'PATCH',
          `${V1}/teams/ssa-flux?dryRun=All&fieldManager=kustomize-controller&force=true`,
          JSON.stringify(obj),
          headers,
        );
        assert.equal(again.status, 200, again.text);
        assert.equal(again.json<Team>().metadata.resourceVersion, stored.metadata.resourceVersion);
      },
    );

    it(
      'Helm 4’s install: an apply with fieldManager=helm, Strict validation and force=false',
      TEST,
      async () => {
        const obj = team(
          'ssa-helm',
          { displayName: 'Helm' },
          {
            labels: { 'app.kubernetes.io/managed-by': 'Helm' },
            annotations: {
              'meta.helm.sh/release-name': 'platform',
              'meta.helm.sh/release-namespace': 'default',
            },
          },
        );
        const headers = { 'content-type': APPLY, 'user-agent': 'Helm/4.0.0 (linux/amd64) kubernetes/abc' };
        const path = `${V1}/teams/ssa-helm?fieldManager=helm&fieldValidation=Strict&force=false`;
        const r = await s.api('PATCH', path, JSON.stringify(obj), headers);
        assert.equal(r.status, 201, r.text);
        assert.deepEqual(ownersOf(await read('ssa-helm'), 'displayName'), ['helm/Apply']);
        // Strict validation refuses what the schema does not know, as Helm expects.
        const unknown = await s.api(
          'PATCH',
          path,
          JSON.stringify(team('ssa-helm', { displayName: 'Helm', colour: 'x' })),
          headers,
        );
        // Refused while typing the configuration (structuredmerge.go), as upstream does.
        assert.equal(unknown.status, 500, unknown.text);
        assert.match(unknown.text, /\.spec\.colour: field not declared in schema/);
        // An apply without a fieldManager is refused with upstream's words.
        const anonymous = await s.api('PATCH', `${V1}/teams/ssa-helm`, JSON.stringify(obj), headers);
        assert.equal(anonymous.status, 422);
        assert.match(anonymous.text, /fieldManager: Required value: is required for apply patch/);
        const forceOnMerge = await s.api('PATCH', `${V1}/teams/ssa-helm?force=true`, '{}', {
          'content-type': 'application/merge-patch+json',
        });
        assert.equal(forceOnMerge.status, 422, forceOnMerge.text);
      },
    );

    it(
      'kubectl apply keeps map keys named after Object.prototype members, and refuses a typo without echoing the data',
      TEST,
      async () => {
        const secret = (spec: Record<string, unknown>): Record<string, unknown> => ({
          apiVersion: GROUP_VERSION,
          kind: 'SharedSecret',
          metadata: {
            name: 'ssa-proto',
            namespace: 'default',
            labels: { toString: 'ts', constructor: 'ctor' },
          },
          spec,
        });
        // Built from JSON text: a `__proto__:` in a literal would set the prototype.
        const data = JSON.parse(
          '{"a":"YQ==","__proto__":"cA==","constructor":"Yw==","toString":"dA=="}',
        ) as unknown;
        ok(await kubectlApply(secret({ data })), 'apply');
        const r = await s.api('GET', `${V1}/namespaces/default/sharedsecrets/ssa-proto`);
        assert.equal(r.status, 200, r.text);
        const stored = JSON.parse(r.text) as { metadata: { labels: unknown }; spec: { data: unknown } };
        assert.deepEqual(stored.metadata.labels, { toString: 'ts', constructor: 'ctor' });
        assert.deepEqual(Object.keys(stored.spec.data as object).sort(), [
          '__proto__',
          'a',
          'constructor',
          'toString',
        ]);

        const value = 'VHlwb1NlY3JldFZhbHVl';
        // --validate=false: kubectl 1.20 checks fields against the OpenAPI document itself
        // and would never send the typo; the server's answer is what is under test.
        const typo = await kubectlApply(secret({ dataa: { password: value } }), '--validate=false');
        assert.notEqual(typo.code, 0, typo.stdout);
        assert.match(
          typo.stderr,
          /failed to create typed patch object \(default\/ssa-proto; [^)]*Kind=SharedSecret\): \.spec\.dataa: field not declared in schema/,
        );
        assert.ok(!typo.stderr.includes(value), typo.stderr);
      },
    );
  });
}
