// Deletes that finish: ownerReferences garbage collection as a kubectl user sees
// it, on each storage backend. kubectl delete --cascade=background|foreground|orphan
// must return (kubectl waits until the object is gone), dependents of a vanished
// owner must go, and a deleted user's keys stop working and disappear.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { backends, GROUP, GROUP_VERSION, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { readObject } from './read-object.js';
import type { CommandResult } from './commands.js';
import { apiRequest } from './https-client.js';
import { runCommand } from './commands.js';
import { readFileSync } from 'node:fs';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;
const NS = 'gc-e2e';

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
}

/** README's shell command that lists the keys older than their current owner. */
function readmeKeyReview(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const from = readme.indexOf('To review by hand every key older than its current');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(from));
  assert.ok(from >= 0 && block, 'the README shows the review');
  return block[1]!;
}

function ok(r: CommandResult, what: string): void {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function team(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: GROUP_VERSION, kind: 'Team', metadata: { name, labels }, spec: {} };
}

function secret(name: string, owners: OwnerReference[]): KubeObject {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'SharedSecret',
    metadata: { name, namespace: NS, ownerReferences: owners },
    spec: { displayName: name, data: {} },
  };
}

function user(name: string, owners: OwnerReference[] = []): KubeObject {
  return { apiVersion: GROUP_VERSION, kind: 'User', metadata: { name, ownerReferences: owners }, spec: {} };
}

function ref(owner: KubeObject, blockOwnerDeletion?: boolean): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    ...(blockOwnerDeletion !== undefined ? { blockOwnerDeletion } : {}),
  };
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting until ${what}`);
}

for (const backend of backends()) {
  describe(`garbage collection on ${backend}`, () => {
    let s: TestServer;

    before(async () => {
      s = await startServer({ backend });
    });
    after(async () => {
      await s?.stop();
    });

    async function create(obj: KubeObject): Promise<KubeObject> {
      const r = await s.kubectl(['create', '-o', 'json', '-f', '-'], { input: toYaml(obj) });
      ok(r, `kubectl create ${obj.kind} ${obj.metadata.name}`);
      return JSON.parse(r.stdout) as KubeObject;
    }

    function read(resource: string, name: string, namespace?: string): Promise<KubeObject | undefined> {
      return readObject<KubeObject>(s, resource, name, namespace);
    }

    const gone = (resource: string, name: string, namespace?: string) => async (): Promise<boolean> =>
      (await read(resource, name, namespace)) === undefined;

    type CreatedKey = KubeObject & { spec: { key: string } };

    /** Creates an access key of the user; the response is the only place its plain key shows. */
    async function createKey(name: string, userName: string): Promise<CreatedKey> {
      const created = await s.api('POST', `${V1}/ownedaccesskeys`, {
        apiVersion: GROUP_VERSION,
        kind: 'OwnedAccessKey',
        metadata: { name },
        spec: { user: userName },
      });
      assert.equal(created.status, 201, created.text);
      return created.json<CreatedKey>();
    }

    /** The status of a `selves` call with the key (201: it authenticates). */
    async function whoAmIStatus(token: string): Promise<number> {
      const who = await apiRequest({ baseUrl: s.apiBase, ca: s.ca, token }, 'POST', `${V1}/selves`, {
        apiVersion: GROUP_VERSION,
        kind: 'Self',
        spec: {},
      });
      return who.status;
    }

    it('kubectl delete (background) deletes the dependents of the deleted owner', TEST, async () => {
      const owner = await create(team('gc-bg'));
      await create(secret('gc-bg-secret', [ref(owner)]));
      await create(user('gc-bg-user', [ref(owner)]));
      ok(await s.kubectl(['delete', 'team', 'gc-bg']), 'kubectl delete team');
      await eventually('the dependent secret is gone', gone('sharedsecrets', 'gc-bg-secret', NS));
      await eventually('the dependent user is gone', gone('users', 'gc-bg-user'));
    });

    it(
      'kubectl delete --cascade=foreground returns once the owner is gone, after its dependents',
      TEST,
      async () => {
        const owner = await create(team('gc-fg'));
        await create(user('gc-fg-blocking', [ref(owner, true)]));
        await create(secret('gc-fg-secret', [ref(owner)]));
        const r = await s.kubectl(['delete', 'team', 'gc-fg', '--cascade=foreground'], { timeoutMs: 60_000 });
        ok(r, 'kubectl delete --cascade=foreground');
        assert.match(r.stdout, /team\.management\.platform\.dev "gc-fg" deleted/);
        assert.equal(await read('teams', 'gc-fg'), undefined);
        // The blocking dependent went before its owner could.
        assert.equal(await read('users', 'gc-fg-blocking'), undefined);
        await eventually('the non-blocking dependent is gone', gone('sharedsecrets', 'gc-fg-secret', NS));
      },
    );

    it(
      'kubectl delete --cascade=orphan returns and leaves the dependents without the reference',
      TEST,
      async () => {
        const owner = await create(team('gc-orphan'));
        const other = await create(team('gc-orphan-other'));
        await create(secret('gc-orphan-secret', [ref(owner)]));
        await create(user('gc-orphan-user', [ref(owner), ref(other)]));
        ok(
          await s.kubectl(['delete', 'team', 'gc-orphan', '--cascade=orphan'], { timeoutMs: 60_000 }),
          'kubectl delete --cascade=orphan',
        );
        assert.equal(await read('teams', 'gc-orphan'), undefined);
        const dep = await read('sharedsecrets', 'gc-orphan-secret', NS);
        assert.ok(dep, 'the orphaned secret stays');
        assert.equal(dep.metadata.ownerReferences, undefined);
        const both = await read('users', 'gc-orphan-user');
        assert.deepEqual(
          both?.metadata.ownerReferences?.map((r) => r.name),
          ['gc-orphan-other'],
        );
      },
    );

    it('deletecollection honours propagationPolicy', TEST, async () => {
      const a = await create(team('gc-coll-a', { gc: 'coll' }));
      const b = await create(team('gc-coll-b', { gc: 'coll' }));
      await create(user('gc-coll-user-a', [ref(a, true)]));
      await create(secret('gc-coll-secret-b', [ref(b)]));
      const r = await s.api('DELETE', `${V1}/teams?labelSelector=gc%3Dcoll`, {
        apiVersion: 'meta.k8s.io/v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Foreground',
      });
      assert.equal(r.status, 200, r.text);
      const list = r.json<{ items: KubeObject[] }>();
      // Foreground: the owners come back marked for deletion, holding their finalizer.
      for (const item of list.items) {
        assert.ok(item.metadata.deletionTimestamp, `${item.metadata.name} is being deleted`);
        assert.deepEqual(item.metadata.finalizers, ['foregroundDeletion']);
      }
      assert.deepEqual(list.items.map((i) => i.metadata.name).sort(), ['gc-coll-a', 'gc-coll-b']);
      await eventually(
        'the owners are gone',
        async () => (await gone('teams', 'gc-coll-a')()) && (await gone('teams', 'gc-coll-b')()),
      );
      await eventually(
        'their dependents are gone',
        async () =>
          (await gone('users', 'gc-coll-user-a')()) &&
          (await gone('sharedsecrets', 'gc-coll-secret-b', NS)()),
      );

      // Orphan through deletecollection: the dependent stays, without the reference.
      const c = await create(team('gc-coll-c', { gc: 'orphan' }));
      await create(secret('gc-coll-secret-c', [ref(c)]));
      const o = await s.api('DELETE', `${V1}/teams?labelSelector=gc%3Dorphan`, {
        propagationPolicy: 'Orphan',
      });
      assert.equal(o.status, 200, o.text);
      await eventually('the orphaning owner is gone', gone('teams', 'gc-coll-c'));
      const kept = await read('sharedsecrets', 'gc-coll-secret-c', NS);
      assert.ok(kept);
      assert.equal(kept.metadata.ownerReferences, undefined);
    });

    it('an owner deleted and re-created under the same name does not keep the dependents', TEST, async () => {
      const first = await create(team('gc-recreated'));
      ok(await s.kubectl(['delete', 'team', 'gc-recreated']), 'kubectl delete team');
      await create(team('gc-recreated'));
      await create(secret('gc-recreated-secret', [ref(first)]));
      await eventually(
        'the dependent of the old owner is gone',
        gone('sharedsecrets', 'gc-recreated-secret', NS),
      );
      assert.ok(await read('teams', 'gc-recreated'), 'the new owner stays');
    });

    it('an object with two owners stays until both are gone', TEST, async () => {
      const a = await create(team('gc-two-a'));
      const b = await create(team('gc-two-b'));
      await create(secret('gc-two-secret', [ref(a), ref(b)]));
      ok(await s.kubectl(['delete', 'team', 'gc-two-a']), 'kubectl delete team a');
      await eventually('the reference to the deleted owner is dropped', async () => {
        const dep = await read('sharedsecrets', 'gc-two-secret', NS);
        assert.ok(dep, 'the secret must stay while one owner exists');
        return dep.metadata.ownerReferences?.length === 1;
      });
      ok(await s.kubectl(['delete', 'team', 'gc-two-b']), 'kubectl delete team b');
      await eventually('the dependent is gone', gone('sharedsecrets', 'gc-two-secret', NS));
    });

    it("a deleted user's access keys stop working at once and are deleted", TEST, async () => {
      const alice = await create(user('gc-alice'));
      const key = await createKey('gc-alice-key', 'gc-alice');
      assert.deepEqual(key.metadata.ownerReferences, [
        { apiVersion: GROUP_VERSION, kind: 'User', name: 'gc-alice', uid: alice.metadata.uid },
      ]);
      const asAlice = (): Promise<number> => whoAmIStatus(key.spec.key);
      await eventually('the key authenticates', async () => (await asAlice()) === 201);

      // The reference cannot be dropped while the user exists.
      const patch = await s.api(
        'PATCH',
        `${V1}/ownedaccesskeys/gc-alice-key`,
        { metadata: { ownerReferences: null } },
        {
          'Content-Type': 'application/merge-patch+json',
        },
      );
      assert.equal(patch.status, 422, patch.text);
      assert.match(patch.text, /cannot be removed while the user exists/);

      ok(await s.kubectl(['delete', 'user', 'gc-alice']), 'kubectl delete user');
      await eventually('the key is refused', async () => (await asAlice()) === 401);
      await eventually('the key is deleted', gone('ownedaccesskeys', 'gc-alice-key'));
    });

    it('a key whose reference was relabelled is not adopted after an orphaning delete', TEST, async () => {
      const carol = await create(user('gc-carol'));
      const plain = (await createKey('gc-carol-key', 'gc-carol')).spec.key;
      await eventually('the key authenticates', async () => (await whoAmIStatus(plain)) === 201);
      // The collector drops references by uid: relabelled, the owner's would go
      // with no former owner recorded.
      const relabel = await s.api(
        'PATCH',
        `${V1}/ownedaccesskeys/gc-carol-key`,
        [
          {
            op: 'replace',
            path: '/metadata/ownerReferences',
            value: [{ apiVersion: GROUP_VERSION, kind: 'Team', name: 'nobody', uid: carol.metadata.uid }],
          },
        ],
        { 'Content-Type': 'application/json-patch+json' },
      );
      assert.equal(relabel.status, 422, relabel.text);
      assert.match(relabel.text, /may only be referenced as that user, not as Team \\"nobody\\"/);

      ok(
        await s.kubectl(['delete', 'user', 'gc-carol', '--cascade=orphan'], { timeoutMs: 60_000 }),
        'orphan delete',
      );
      await eventually('the key is orphaned', async () => {
        const k = await read('ownedaccesskeys', 'gc-carol-key');
        assert.ok(k, 'an orphaned key stays');
        return k.metadata.ownerReferences === undefined;
      });
      await create(user('gc-carol'));
      const freshKey = await createKey('gc-carol-key-2', 'gc-carol');
      await eventually(
        'the new user can log in',
        async () => (await whoAmIStatus(freshKey.spec.key)) === 201,
      );
      assert.equal(await whoAmIStatus(plain), 401, 'the old key does not speak for the new user');
    });

    it('a user re-created after an orphaning delete does not get the old keys', TEST, async () => {
      await create(user('gc-bob'));
      const plain = (await createKey('gc-bob-key', 'gc-bob')).spec.key;
      const asBob = (token = plain): Promise<number> => whoAmIStatus(token);
      await eventually('the key authenticates', async () => (await asBob()) === 201);

      ok(
        await s.kubectl(['delete', 'user', 'gc-bob', '--cascade=orphan'], { timeoutMs: 60_000 }),
        'orphan delete',
      );
      await eventually('the key is orphaned', async () => {
        const k = await read('ownedaccesskeys', 'gc-bob-key');
        assert.ok(k, 'an orphaned key stays');
        return k.metadata.ownerReferences === undefined;
      });
      const bob = await create(user('gc-bob'));
      // A write of the key (as the start-up migration makes) must not hand it to the new bob.
      const touched = await s.api(
        'PATCH',
        `${V1}/ownedaccesskeys/gc-bob-key`,
        { spec: { displayName: 'touched' } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      assert.equal(touched.status, 200, touched.text);
      const after = touched.json<KubeObject>();
      assert.equal(after.metadata.ownerReferences, undefined, 'the new user does not own the key');
      // A key of the new bob working shows the server knows him; the old key must still fail.
      const freshKey = await createKey('gc-bob-key-2', 'gc-bob');
      assert.deepEqual(
        freshKey.metadata.ownerReferences?.map((r) => r.uid),
        [bob.metadata.uid],
      );
      await eventually('the new user can log in', async () => (await asBob(freshKey.spec.key)) === 201);
      assert.equal(await asBob(), 401, 'the old key does not speak for the new user');
    });

    it("only an administrator re-adopts a key recorded as a former owner's", TEST, async () => {
      await create(user('gc-dan'));
      const old = await createKey('gc-dan-key', 'gc-dan');
      await eventually('the key authenticates', async () => (await whoAmIStatus(old.spec.key)) === 201);
      ok(
        await s.kubectl(['delete', 'user', 'gc-dan', '--cascade=orphan'], { timeoutMs: 60_000 }),
        'orphan delete',
      );
      await eventually(
        'the key is orphaned',
        async () => (await read('ownedaccesskeys', 'gc-dan-key'))?.metadata.ownerReferences === undefined,
      );
      const refusedOld = async (): Promise<string> => {
        const r = await apiRequest({ baseUrl: s.apiBase, ca: s.ca, token: old.spec.key }, 'GET', V1);
        assert.equal(r.status, 401, r.text);
        return r.json<{ message: string }>().message;
      };
      const goneAnswer =
        'the user "gc-dan" the access key "gc-dan-key" was made for no longer exists; use another key (a user created again with that name does not inherit it)';
      assert.equal(await refusedOld(), goneAnswer, 'while no gc-dan exists');
      // Creation times are whole seconds: the new gc-dan is created in a later one than the key.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const dan = await create(user('gc-dan'));
      const fresh = await createKey('gc-dan-key-2', 'gc-dan');
      await eventually('the new user can log in', async () => (await whoAmIStatus(fresh.spec.key)) === 201);

      // The same answer as before: the key's holder is not told that a gc-dan exists again.
      assert.equal(await refusedOld(), goneAnswer, 'once gc-dan exists again');
      // The log says why, naming the key, never its value.
      const reasonLines = (): string[] =>
        s
          .logTail()
          .split('\n')
          .filter(
            (l) =>
              l.includes('"accessKey":"gc-dan-key"') &&
              l.includes('orphaned from a former User of that name'),
          );
      await eventually('the reason is logged', async () => reasonLines().length > 0);
      assert.ok(!s.logTail().includes(old.spec.key), 'no key in the log');
      // A client retrying it in a loop gets a line a minute, not one a request.
      for (let i = 0; i < 20; i++) assert.equal(await refusedOld(), goneAnswer);
      assert.ok(reasonLines().length <= 1, `one line for 20 refusals:\n${reasonLines().join('\n')}`);

      // The re-created gc-dan may not re-adopt it, whatever he may do with his keys.
      const annotation = `${GROUP}/former-owner-uid`;
      const byDan = await apiRequest(
        { baseUrl: s.apiBase, ca: s.ca, token: fresh.spec.key },
        'PATCH',
        `${V1}/ownedaccesskeys/gc-dan-key`,
        { metadata: { annotations: { [annotation]: dan.metadata.uid } } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      assert.equal(byDan.status, 403, byDan.text);
      assert.equal(
        byDan.json<{ message: string }>().message,
        `ownedaccesskeys.${GROUP} "gc-dan-key" is forbidden: User "gc-dan" cannot change the annotation "${annotation}": only administrators may re-adopt an access key recorded as a former owner's`,
      );
      assert.equal(await whoAmIStatus(old.spec.key), 401, 'still refused');

      // README's review: every key older than its current owner, gc-dan-key among them.
      const review = await runCommand('bash', ['-c', readmeKeyReview()], {
        env: { ...process.env, KUBECONFIG: s.kubeconfigPath },
      });
      assert.equal(review.code, 0, review.stderr);
      const listed = review.stdout.split('\n').map((l) => l.split(' ').slice(0, 2).join(' '));
      assert.ok(listed.includes('gc-dan-key User/gc-dan'), review.stdout);
      assert.ok(!listed.some((l) => l.startsWith('gc-dan-key-2 ')), review.stdout);

      // The administrator, with the README's command.
      ok(
        await s.kubectl([
          'annotate',
          'ownedaccesskey',
          'gc-dan-key',
          `${annotation}=${dan.metadata.uid ?? ''}`,
          '--overwrite',
        ]),
        'kubectl annotate',
      );
      const adopted = await read('ownedaccesskeys', 'gc-dan-key');
      assert.deepEqual(
        adopted?.metadata.ownerReferences?.map((r) => r.uid),
        [dan.metadata.uid],
      );
      await eventually(
        'the key authenticates as gc-dan',
        async () => (await whoAmIStatus(old.spec.key)) === 201,
      );
    });
  });
}
