// What the start-up key migration and the access-key rule for keys orphaned before
// their former owner was recorded cost, measured A/B in one process, alternating
// rounds (A, B, A, B, ...; medians), with this process's CPU time per operation
// beside wall time (far less disturbed by other load on a shared machine):
//
//   1. migration, owners read one by one (A: a storage get per owner, as the
//      first version of the extended migration did) against owners read with one
//      list of Users and one of Teams (B: listedKeyOwners, what the server runs), over
//      N Users with one key each that already references its owner: the steady
//      state of every start, which the server waits for before it is ready;
//   2. the access-key checks of one key per call (AccessKeyUsability.check), for a
//      key that references its owner (A: every key made since keys named their
//      owner) and for one that does not (B: the only keys that pay for the time rule,
//      keyPredatesOwner).
//
// Embedded SQLite in memory, no network. Run:
//   node dist/hack/bench/startup-keys.js [users] [rounds]     (default 2000 users, 5 rounds)

import type { KubeObject } from '../../pkg/apis/meta/types.js';
import {
  formerOwnerAnnotation,
  hashAccessKey,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../pkg/apis/management/v1/owned-access-key.js';
import { AccessKeyUsability } from '../../pkg/authentication/access-key-usability.js';
import { memoryIdentitySource } from '../../pkg/authentication/testing/identity-source.js';
import {
  listedKeyOwners,
  migrateKeyOwners,
} from '../../pkg/registry/management/owned-access-key/owner-migration.js';
import type { KeyOwnerLookup } from '../../pkg/registry/management/owned-access-key/owner-reference.js';
import { buildResources, collectionPrefix, resourceStore } from '../../pkg/server/resources.js';
import { SqliteKV } from '../../pkg/storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../../pkg/storage/store.js';

const GROUP = 'management.platform.dev';
const PREFIX = '/registry';

interface Sample {
  readonly ms: number;
  readonly cpuUs: number;
}

async function timed(ops: number, fn: () => Promise<void> | void): Promise<Sample> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await fn();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuUs: (used.user + used.system) / ops };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function report(name: string, unit: string, a: readonly Sample[], b: readonly Sample[]): void {
  const fmt = (s: readonly Sample[]): string =>
    `${median(s.map((x) => x.ms)).toFixed(1)} ms, ${median(s.map((x) => x.cpuUs)).toFixed(2)} CPU µs/${unit}`;
  console.log(`${name}\n  A: ${fmt(a)}\n  B: ${fmt(b)}`);
}

async function migrationAB(users: number, rounds: number): Promise<void> {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const usersPrefix = collectionPrefix(PREFIX, GROUP, 'users');
  const perOwner: KeyOwnerLookup = async (kind, name) =>
    (await storage.get(collectionPrefix(PREFIX, GROUP, kind === 'User' ? 'users' : 'teams') + name, {
      ignoreNotFound: true,
    })) ?? undefined;
  const stores = buildResources(GROUP, storage, PREFIX, { keyOwner: perOwner });
  const keys = resourceStore(stores, 'ownedaccesskeys');
  const created = '2026-01-01T00:00:00Z';
  for (let i = 0; i < users; i++) {
    const name = `user-${i}`;
    const user = await storage.create(usersPrefix + name, {
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
      metadata: { name, uid: `uid-${name}`, creationTimestamp: created },
      spec: {},
    });
    await storage.create(collectionPrefix(PREFIX, GROUP, 'ownedaccesskeys') + `key-${i}`, {
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: {
        name: `key-${i}`,
        uid: `uid-key-${i}`,
        creationTimestamp: created,
        ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'User', name, uid: user.metadata.uid ?? '' }],
      },
      spec: { user: name, key: hashAccessKey(`plain-${i}`) },
    });
  }
  const a: Sample[] = [];
  const b: Sample[] = [];
  const runA = async (): Promise<Sample> =>
    timed(users, async () => {
      const r = await migrateKeyOwners(keys, perOwner);
      if (r.updated + r.orphaned.length + r.failed !== 0) throw new Error('the steady state wrote');
    });
  const runB = async (): Promise<Sample> =>
    timed(users, async () => {
      const owners = await listedKeyOwners(resourceStore(stores, 'users'), resourceStore(stores, 'teams'));
      const r = await migrateKeyOwners(keys, owners);
      if (r.updated + r.orphaned.length + r.failed !== 0) throw new Error('the steady state wrote');
    });
  await runA();
  await runB();
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      a.push(await runA());
      b.push(await runB());
    } else {
      b.push(await runB());
      a.push(await runA());
    }
  }
  report(`migration of ${users} keys, nothing to write (A: a get per owner, B: two lists)`, 'key', a, b);
  await storage.close();
}

function checkAB(rounds: number): void {
  const source = memoryIdentitySource();
  const owner: KubeObject = {
    apiVersion: `${GROUP}/v1`,
    kind: 'User',
    metadata: { name: 'alice', uid: 'uid-alice', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {},
  };
  source.users.set('alice', owner);
  const usability = new AccessKeyUsability(source, {
    generationAnnotation: tokenGenerationAnnotation(GROUP),
    formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
    revisionAnnotation: keyRevisionAnnotation(GROUP),
  });
  const key = (refs: boolean): KubeObject => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: {
      name: 'k',
      uid: 'uid-k',
      creationTimestamp: '2026-01-02T00:00:00Z',
      ...(refs
        ? { ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'uid-alice' }] }
        : {}),
    },
    spec: { user: 'alice', key: hashAccessKey('plain') },
  });
  const withRef = key(true);
  const withoutRef = key(false);
  const calls = 500_000;
  const measure = (k: KubeObject): Sample => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < calls; i++) usability.check(k);
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - started, cpuUs: (used.user + used.system) / calls };
  };
  const a: Sample[] = [];
  const b: Sample[] = [];
  // Warm both (JIT) before measuring.
  measure(withRef);
  measure(withoutRef);
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      a.push(measure(withRef));
      b.push(measure(withoutRef));
    } else {
      b.push(measure(withoutRef));
      a.push(measure(withRef));
    }
  }
  report(
    `AccessKeyUsability.check x ${calls} (A: key references its owner, B: no reference, time rule)`,
    'call',
    a,
    b,
  );
}

async function main(): Promise<void> {
  const users = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 5);
  await migrationAB(users, rounds);
  checkAB(rounds);
}

await main();
