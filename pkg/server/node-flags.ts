// The node (V8) flags the server process runs with, in one place. V8 reads its heap
// sizing before any JavaScript runs (v8.setFlagsFromString is too late for it, and
// NODE_OPTIONS refuses --min-semi-space-size), so every launcher must put them on the
// command line: `npm start` (package.json), the image's ENTRYPOINT (Dockerfile; the
// chart and deploy/ run the image's entrypoint and only add arguments), the e2e
// harness and the bench's server host. hack/launchers.test.ts checks that each of them
// carries exactly these.
//
// Why a fixed young generation: V8 (11.3, Node 20) sizes a semi-space by the
// process's history. It starts at 1 MiB, doubles at a collection once more bytes have
// survived since the last growth than it holds (up to 16 MiB on 64-bit), and a full
// collection made at low allocation throughput or by the memory reducer once the
// process idles shrinks it back. So two like servers serving the same gets scavenged
// 2 to 39 times per 1,000 gets, by what each had done before (seeding, idling).
// Fixing it at 16 MiB, V8's own maximum, gives every process the state a loaded one
// reaches anyway: the same scavenges per request from the first request after start-up
// or an idle spell, and no more resident memory than a default process that has served
// load (it had grown to 16 MiB and kept the pages). Pinning the maximum too keeps that
// size when a later Node changes its default. Measured in docs/performance/young-generation.md;
// see docs/design.md ("The server's node flags").
//
// Why V8's GC helper threads stay on (parallel scavenge, concurrent marking and
// sweeping, Node's platform pool of 4): on two cores shared with the load and etcd, the
// server spends 30-47 µs a get and ~140 µs a create on threads other than the main one,
// and --single-threaded-gc cuts that to 7-17 µs a get and ~20 µs a create, but the main
// thread then does the same work itself: its CPU rose by as much or more, so CPU per
// operation moved by less than the rounds' spread for every candidate (single-threaded
// GC, no parallel scavenge, no concurrent marking, a pool of one thread, a pair), while
// doing the marking and sweeping on the main thread made GC pauses longer (the p99 of
// pauses 32-50 ms → 55-73 ms under that load), and with 100,000 cached objects
// its RSS was 763 MiB against 489. Measured in docs/performance/gc-helper-threads.md.
//
// Why a fixed old-generation growth factor (--heap-growing-percent=100: the next
// mark-compact when the old generation reaches twice what survived the last one, plus
// the young generation; Go's GOGC=100, which kube-apiserver runs with): V8 otherwise
// picks the factor by the process's history. Under load it grows to 4 (a server seeded
// as the authz-scale row seeds it, 52 MiB live, held 109-138 MiB of old generation),
// but once the memory reducer has run on an idle process it is clamped to 1.3 with an
// 8 MiB minimum step, so every server marks its whole live heap every ~15 MiB
// promoted: marking per request grows with the live heap (the seeded server paid ~2.4x
// the unseeded one's). With a fixed factor the promoted bytes between collections are
// proportional to the live heap, so marking per promoted byte is the same for any
// heap: the seeded server collected 0.38-0.5x as often per get as the unseeded one, and
// held 47-81 MiB under load. The memory reducer stays on: an idle server still shrinks
// its heap (RSS after an idle spell, and with 100,000 cached objects, no larger than
// under V8's own growing). V8 reads the flag at each collection (v8.setFlagsFromString
// would work too), but it is given here with the others so that it holds from the
// first collection. Measured in docs/performance/fixed-old-generation-growth-factor.md.

import { getHeapSpaceStatistics } from 'node:v8';

/** The flags, in order, between `node` and the server's script. */
export const SERVER_NODE_FLAGS: readonly string[] = [
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
  '--heap-growing-percent=100',
];

/** The semi-space size the flags fix, MiB. */
export const SERVER_MIN_SEMI_SPACE_MIB = 16;

export interface YoungGeneration {
  /** One semi-space's capacity now, MiB (what the young generation holds between scavenges). */
  readonly semiSpaceMiB: number;
  /** Whether the process was started with a --min-semi-space-size of its own (any value). */
  readonly minimumGiven: boolean;
}

/** This process's young generation and whether its launcher set its minimum. */
export function youngGeneration(execArgv: readonly string[] = process.execArgv): YoungGeneration {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  const bytes = space ? space.space_used_size + space.space_available_size : 0;
  return {
    semiSpaceMiB: Math.round(bytes / 2 ** 20),
    minimumGiven: execArgv.some((a) => /^--min[-_]semi[-_]space[-_]size(=|$)/.test(a)),
  };
}
