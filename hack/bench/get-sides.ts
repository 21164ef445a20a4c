// The pieces of a focused get benchmark that several scripts share (get-path.ts,
// authz-scale-cause.ts): a "side" is one process serving gets to the load child, and
// a round is one timed window of gets against it with that process's CPU, garbage
// collections and live heap over the window. Also the authorization-at-scale seeding
// (Teams over the Users, access keys of them), as hack/bench/suite.ts does it, the
// settle before a window, and a script's run (its children stopped at the end).

import { rmSync } from 'node:fs';

import type { Child } from './children.js';
import type { GcStats } from './gc-stats.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH, GROUP, accessKeyBody, userBody } from './objects.js';

export interface Side {
  readonly label: string;
  readonly process: Child;
  readonly target: HttpTarget;
  readonly paths: readonly string[];
  /** The bare baseline server: no GC figures are asked of it. */
  readonly bare?: boolean;
}

export interface Round {
  readonly getsPerSecond: number;
  readonly gets: number;
  readonly cpuMicrosPerGet: number;
  readonly errors: number;
  /** Servers only: collections and their pause per 1,000 gets, and the live heap after the round. */
  readonly gc?: {
    readonly scavenges: number;
    readonly majors: number;
    readonly ms: number;
    readonly heapMb: number;
    /** The young generation's capacity at the end of the window, before the full collection. */
    readonly newSpaceMb: number;
  };
}

export async function cpuOf(p: Child): Promise<number> {
  const u = await p.call<{ user: number; system: number }>({ cpu: true });
  return u.user + u.system;
}

/** As suite.ts's settle(): until the process used under 10% of a core over 500 ms (at most 20 s). */
export async function settle(p: Child): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = await cpuOf(p);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await cpuOf(p);
    if (now - last < 500 * 100) return;
    last = now;
  }
}

export function job(load: Child, j: Job): Promise<LoadResult> {
  return load.call<LoadResult>({ job: j });
}

/** One request through the load child; the response body. */
export async function request(
  load: Child,
  target: HttpTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<string> {
  const r = await job(load, { kind: 'request', target, method, path, body });
  return String(r.extra?.['body']);
}

export const gcOf = (side: Side): Promise<GcStats> | undefined =>
  side.bare === true || side.label === 'bare' ? undefined : side.process.call<GcStats>({ gcStats: true });

const sum = (xs: Record<string, number>): number => Object.values(xs).reduce((a, b) => a + b, 0);

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `clients` clients getting `side`'s paths for `ms`. */
export const gets = (load: Child, side: Side, ms: number, clients: number): Promise<LoadResult> =>
  job(load, {
    kind: 'get',
    target: side.target,
    paths: [...side.paths],
    concurrency: clients,
    warmupMs: 0,
    durationMs: ms,
  });

/** One timed window of gets against `side`, with its process's CPU (and a server's GC) over the window. */
export async function measure(load: Child, side: Side, ms: number, clients: number): Promise<Round> {
  const gcBefore = await gcOf(side);
  const before = await cpuOf(side.process);
  const r = await gets(load, side, ms, clients);
  const used = (await cpuOf(side.process)) - before;
  const gcAfter = await gcOf(side);
  // What is still reachable after the round (a full collection, outside the window): a
  // server that keeps something per request grows here round after round.
  const live = gcAfter ? await side.process.call<{ heapUsed: number }>({ memory: true }) : undefined;
  const per1000 = (n: number): number => (r.operations > 0 ? (n * 1000) / r.operations : 0);
  return {
    getsPerSecond: r.throughput,
    gets: r.operations,
    cpuMicrosPerGet: r.operations > 0 ? used / r.operations : 0,
    errors: r.errors,
    ...(gcBefore && gcAfter
      ? {
          gc: {
            scavenges: per1000((gcAfter.counts['scavenge'] ?? 0) - (gcBefore.counts['scavenge'] ?? 0)),
            majors: per1000((gcAfter.counts['mark-sweep'] ?? 0) - (gcBefore.counts['mark-sweep'] ?? 0)),
            ms: per1000(sum(gcAfter.ms) - sum(gcBefore.ms)),
            heapMb: (live?.heapUsed ?? gcAfter.usedHeapBytes) / 2 ** 20,
            newSpaceMb: gcAfter.newSpaceBytes / 2 ** 20,
          },
        }
      : {}),
  };
}

/** An OwnedAccessKey of `user` with a key given in the clear (the server stores its hash). */
export function plainKeyBody(name: string, user: string, key: string): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name },
    spec: { displayName: name, user, key },
  };
}

/** Waits until `target` can get `path` (a new key works once the identity cache has seen it). */
export async function untilKeyWorks(load: Child, target: HttpTarget, path: string, label: string): Promise<void> {
  for (let i = 0; ; i++) {
    const r = await job(load, { kind: 'get', target, paths: [path], concurrency: 1, warmupMs: 0, durationMs: 50 });
    if (r.errors === 0 && r.operations > 0) return;
    if (i > 100) throw new Error(`${label}: the key never started to work`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The authz-scale row's reader: a plain User with one key, reading their own User. */
export const READER_KEY = 'r'.repeat(40) + 'benchreaderkey0000000000';
export const READER_PATH = `${API_PATH}/users/reader`;

/** Creates the reader (User and key) on the server `admin` reaches; the reader's target once the key works. */
export async function addReader(load: Child, admin: HttpTarget, label: string): Promise<HttpTarget> {
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(load, admin, 'POST', `${API_PATH}/ownedaccesskeys`, plainKeyBody('reader-key', 'reader', READER_KEY));
  const reader: HttpTarget = { origin: admin.origin, token: READER_KEY };
  await untilKeyWorks(load, reader, READER_PATH, label);
  return reader;
}

/** A Team `name` whose members are `users`. */
export function teamBody(name: string, users: readonly string[]): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name },
    spec: { displayName: name, users: [...users] },
  };
}

/**
 * The authorization-at-scale seeding of suite.ts, over HTTPS as the admin: `teams`
 * Teams over the Users `member-0..users-1` (team i holds every member u with
 * u % teams == i, and the first also `firstTeamAlso`), then `keys` access keys, key i
 * of `member-(i % users)`. The Users must exist.
 */
export async function seedTeamsAndKeys(
  load: Child,
  admin: HttpTarget,
  sizes: { readonly users: number; readonly teams: number; readonly keys: number },
  firstTeamAlso: readonly string[] = [],
): Promise<void> {
  const { users, teams, keys } = sizes;
  const post = (resource: string, body: unknown): Promise<string> =>
    request(load, admin, 'POST', `${API_PATH}/${resource}`, body);
  for (let i = 0; i < teams; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, teams - i) }, (_, j) => {
        const t = i + j;
        const members: string[] = [];
        for (let u = t; u < users; u += teams) members.push(`member-${u}`);
        if (t === 0) members.push(...firstTeamAlso);
        return post('teams', teamBody(`team-${t}`, members));
      }),
    );
  }
  for (let i = 0; i < keys && users > 0; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, keys - i) }, (_, j) => {
        const k = i + j;
        return post(
          'ownedaccesskeys',
          accessKeyBody(`key-${k}`, `member-${k % users}`, `k${String(k).padStart(8, '0')}`.padEnd(64, 'x')),
        );
      }),
    );
  }
}

/**
 * Runs a focused script's `main`: its error printed (exit code 1), then its children
 * stopped, the last started first, and its scratch directory removed (kept with BENCH_KEEP).
 */
export function runScript(main: () => Promise<void>, children: Child[], dir: string): void {
  main()
    .catch((err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
      process.exitCode = 1;
    })
    .finally(async () => {
      for (const c of children.reverse()) await c.stop().catch(() => undefined);
      if (!process.env['BENCH_KEEP']) rmSync(dir, { recursive: true, force: true });
    });
}
