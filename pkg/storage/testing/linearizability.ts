// A linearizability checker for histories of a revisioned key-value store: writes
// (create, update, delete) and consistent reads (a get of one key, a list of a
// prefix), each with the logical times it was invoked and answered.
//
// Storage tells us the order of the writes: each carries its revision, and etcd's
// revisions are its linearization of writes. That turns the general search of Wing &
// Gong (or Porcupine) into a polynomial check. A read observed some state of the keys
// it covers; the revisions p at which the store was in that state form a set F (for
// a get, [the observed write's revision, the key's next write)). The history is
// linearizable iff every read can be given a point p in F such that
//   - p >= the revision of every write acknowledged before the read was invoked
//     (it sees every write that finished before it began),
//   - p <  the revision of every write invoked after the read answered
//     (it sees nothing not yet written),
//   - p >= the point of every read that answered before it was invoked
//     (reads never go back in time),
// and the writes' revisions respect real time among themselves. Giving each read
// the least such point, in order of invocation, finds an assignment if any exists:
// a least point only loosens the bounds of the reads after it.

/** A write storage acknowledged, at `revision` (the object's resourceVersion, or the delete's). */
export interface WriteRecord {
  readonly key: string;
  readonly revision: number;
  readonly deleted: boolean;
  readonly invokedAt: number;
  readonly answeredAt: number;
}

/** A consistent read: what it covered and what it saw (key -> the resourceVersion of the object seen). */
export interface ReadRecord {
  /** One key (a get), or every key under a prefix ending in "/" (a list). */
  readonly scope: { readonly key: string } | { readonly prefix: string };
  readonly observed: ReadonlyMap<string, number>;
  /** A list's resourceVersion: the state it shows must be the state at this revision. */
  readonly listRevision?: number;
  readonly invokedAt: number;
  readonly answeredAt: number;
}

/** Half-open intervals [from, to) of revisions, sorted and disjoint. */
type Points = readonly (readonly [number, number])[];

const ALL: Points = [[0, Infinity]];

function intersect(a: Points, b: Points): Points {
  const out: [number, number][] = [];
  for (const [af, at] of a) {
    for (const [bf, bt] of b) {
      const from = Math.max(af, bf);
      const to = Math.min(at, bt);
      if (from < to) out.push([from, to]);
    }
  }
  return out.sort((x, y) => x[0] - y[0]);
}

function contains(points: Points, p: number): boolean {
  return points.some(([from, to]) => from <= p && p < to);
}

/** The least point in `points` at or above `min` and below `max`, if any. */
function leastWithin(points: Points, min: number, max: number): number | undefined {
  for (const [from, to] of points) {
    const p = Math.max(from, min);
    if (p < to && p < max) return p;
  }
  return undefined;
}

function describe(read: ReadRecord): string {
  const scope = 'key' in read.scope ? `get ${read.scope.key}` : `list ${read.scope.prefix}`;
  const seen = [...read.observed].map(([k, rv]) => `${k}@${rv}`).join(', ') || 'nothing';
  return `${scope} [${read.invokedAt}, ${read.answeredAt}] saw ${seen}`;
}

export class LinearizabilityChecker {
  /** Each key's writes in revision order. */
  private readonly byKey = new Map<string, WriteRecord[]>();
  private readonly writes: WriteRecord[];

  constructor(writes: readonly WriteRecord[]) {
    this.writes = [...writes].sort((a, b) => a.revision - b.revision);
    for (const w of this.writes) {
      const list = this.byKey.get(w.key) ?? [];
      list.push(w);
      this.byKey.set(w.key, list);
    }
  }

  /** Every way the history is not linearizable (empty: it is). Stops after `limit` findings. */
  check(reads: readonly ReadRecord[], limit = 10): string[] {
    const problems = this.checkWrites(limit);
    const ordered = [...reads].sort((a, b) => a.invokedAt - b.invokedAt);
    const placed: { answeredAt: number; point: number }[] = [];
    for (const read of ordered) {
      if (problems.length >= limit) break;
      const feasible = this.statesMatching(read);
      if (typeof feasible === 'string') {
        problems.push(`${describe(read)}: ${feasible}`);
        continue;
      }
      if (read.listRevision !== undefined && !contains(feasible, read.listRevision)) {
        problems.push(
          `${describe(read)}: the store was never in that state at its resourceVersion ${read.listRevision}`,
        );
      }
      let min = 0;
      let max = Infinity;
      for (const w of this.writes) {
        if (w.answeredAt < read.invokedAt) min = Math.max(min, w.revision);
        if (w.invokedAt > read.answeredAt) max = Math.min(max, w.revision);
      }
      let afterReads = 0;
      for (const earlier of placed) {
        if (earlier.answeredAt < read.invokedAt) afterReads = Math.max(afterReads, earlier.point);
      }
      const point = leastWithin(feasible, Math.max(min, afterReads), max);
      if (point === undefined) {
        problems.push(`${describe(read)}: ${this.whyNot(feasible, min, max, afterReads)}`);
        continue;
      }
      placed.push({ answeredAt: read.answeredAt, point });
    }
    return problems;
  }

  private whyNot(feasible: Points, min: number, max: number, afterReads: number): string {
    if (leastWithin(feasible, min, max) !== undefined) {
      return `goes back before a read that answered before it began (revision ${afterReads})`;
    }
    if (leastWithin(feasible, min, Infinity) === undefined) {
      return `misses a write acknowledged before it began (revision ${min})`;
    }
    if (leastWithin(feasible, 0, max) === undefined)
      return `sees a write invoked after it answered (revision ${max})`;
    return `matches no revision from ${min} (acknowledged before it began) to ${max} (invoked after it answered)`;
  }

  /** Writes must take revisions in real-time order: one acknowledged before another began comes first. */
  private checkWrites(limit: number): string[] {
    const problems: string[] = [];
    for (const a of this.writes) {
      for (const b of this.writes) {
        if (a.answeredAt < b.invokedAt && a.revision >= b.revision) {
          problems.push(`write ${a.key}@${a.revision} finished before write ${b.key}@${b.revision} began`);
          if (problems.length >= limit) return problems;
        }
      }
    }
    return problems;
  }

  /** The revisions at which the keys a read covers were as it saw them; a string says why there are none. */
  private statesMatching(read: ReadRecord): Points | string {
    const keys = new Set<string>(read.observed.keys());
    if ('key' in read.scope) {
      keys.add(read.scope.key);
    } else {
      const prefix = read.scope.prefix;
      for (const key of keys) if (!key.startsWith(prefix)) return `saw ${key}, outside ${prefix}`;
      for (const key of this.byKey.keys()) if (key.startsWith(prefix)) keys.add(key);
    }
    let points = ALL;
    for (const key of keys) {
      const states = this.statesOf(key, read.observed.get(key));
      if (typeof states === 'string') return states;
      points = intersect(points, states);
      if (points.length === 0) return 'no single revision shows all it saw';
    }
    return points;
  }

  /** When `key` held the object written at `revision` (or was absent, for undefined). */
  private statesOf(key: string, revision: number | undefined): Points | string {
    const writes = this.byKey.get(key) ?? [];
    if (revision !== undefined) {
      const i = writes.findIndex((w) => w.revision === revision);
      const w = writes[i];
      if (w === undefined || w.deleted) return `saw ${key}@${revision}, which no acknowledged write wrote`;
      return [[revision, writes[i + 1]?.revision ?? Infinity]];
    }
    // Absent before the first write and after each delete, until the next write.
    const out: [number, number][] = [[0, writes[0]?.revision ?? Infinity]];
    writes.forEach((w, i) => {
      if (w.deleted) out.push([w.revision, writes[i + 1]?.revision ?? Infinity]);
    });
    return out.filter(([from, to]) => from < to);
  }
}
