// node dist/hack/bench/yaml-keys-ab.js --baseline <other build's dist/pkg/apiserver/body.js>
//                                      [--rounds R] [--decodes N] [--only <body name part>] [--bombs]
//
// What reading YAML scalars as kube-apiserver does costs a YAML body (pkg/apiserver/
// yaml-scalars.ts: each plain scalar, map key or value, resolved from its source text by
// goyaml.v2's rules, keys written back as sigs.k8s.io/yaml writes them). Decodes the same
// YAML bodies with this build's decodeYAML (B) and with another build's (A, `--baseline`:
// e.g. the commit before the change, exported with `git archive <commit> pkg tsconfig*.json
// package.json` into a directory, node_modules linked, built with `tsc -p
// tsconfig.build.json`). In process, without HTTP: the body decode alone, which a request
// through the server pays on top of the same fixed cost on both sides. Four bodies: a Team
// as kubectl sends it (a dozen keys), a Global Secret with 200 data keys (keys dominate),
// a manifest-sized object with 2,000 keys in nested maps, and 2,000 typed values (bools,
// integers, floats, nulls, strings) in a list. Every body reads alike in YAML 1.2 and 1.1,
// so both builds must decode it alike (checked). Rounds alternate A and B so a noisy
// neighbour slows them alike; the median round counts; CPU µs per decode is
// process.cpuUsage() over each round's window. Two more bodies have merge keys (a Global
// Secret whose 40 data keys merge two anchored maps, a Team whose annotations merge its
// labels): what the side-table merges and the one-pass alias index cost ordinary bodies.
//
// `--bombs` adds the review's bodies that blocked the old decoder (every alias resolved
// by walking the whole document, merged copies walked again): each decoded once per side,
// CPU ms per decode, at sizes the old build survives in seconds; then, this build only,
// the sizes that took it minutes. (docs/performance/yaml-keys-as-goyaml-cost.md, "Aliases
// resolved in one pass".)

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { decodeYAML } from '../../pkg/apiserver/body.js';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    decodes: { type: 'string', default: '400' },
    only: { type: 'string' },
    bombs: { type: 'boolean', default: false },
  },
});
if (!args.baseline) {
  console.error('--baseline <other build dist/pkg/apiserver/body.js> is required');
  process.exit(2);
}
const ROUNDS = Number(args.rounds);
const DECODES = Number(args.decodes);

type Decode = (text: string, exact?: boolean) => { value: unknown };

const team = `apiVersion: management.platform.dev/v1
kind: Team
metadata:
  name: platform
  labels:
    app.kubernetes.io/name: platform
    app.kubernetes.io/part-of: infra
  annotations:
    example.dev/owner: sre
spec:
  displayName: Platform team
  description: Runs the platform
  users: [alice, bob, carol]
  groups: [oncall, release]
  clusterRoles:
    - name: view
`;

function secret(keys: number): string {
  let text = `apiVersion: management.platform.dev/v1
kind: SharedSecret
metadata:
  name: many-keys
  namespace: default
spec:
  displayName: Many keys
  data:
`;
  for (let i = 0; i < keys; i++) text += `    key-${i}: ${Buffer.from(`value ${i}`).toString('base64')}\n`;
  return text;
}

function nested(maps: number, keys: number): string {
  let text = 'apiVersion: management.platform.dev/v1\nkind: Team\nmetadata:\n  name: nested\nspec:\n';
  for (let m = 0; m < maps; m++) {
    text += `  m${m}:\n`;
    for (let k = 0; k < keys; k++) text += `    k${k}: ${k % 3 === 0 ? String(k) : `v${k}`}\n`;
  }
  return text;
}

/** Typed values YAML 1.2 and goyaml.v2 read alike: bools, integers, floats, nulls, words. */
function typedValues(count: number): string {
  const kinds = ['true', 'false', '42', '-7', '1.5', '0.25', 'null', 'word', 'two words', '2001-01-01'];
  let text = 'apiVersion: management.platform.dev/v1\nkind: Team\nmetadata:\n  name: typed\nspec:\n  values:\n';
  for (let i = 0; i < count; i++) text += `    - ${kinds[i % kinds.length] ?? ''}\n`;
  return text;
}

/** A Global Secret whose 40 data keys are merged from two anchored maps of 20. */
function mergedSecret(): string {
  const entries = (from: number): string =>
    Array.from({ length: 20 }, (_, i) => `key-${from + i}: ${Buffer.from(`value ${from + i}`).toString('base64')}`).join(', ');
  return `apiVersion: management.platform.dev/v1
kind: SharedSecret
metadata:
  name: merged
  namespace: default
  annotations:
    a: &a {${entries(0)}}
    b: &b {${entries(20)}}
spec:
  data:
    <<: [*a, *b]
`;
}

/** The Team above, its annotations merging its anchored labels. */
const mergedTeam = team
  .replace('  labels:\n', '  labels: &l\n')
  .replace('  annotations:\n', '  annotations:\n    <<: *l\n');

const BODIES: Record<string, string> = {
  'team (13 keys)': team,
  'secret (200 data keys)': secret(200),
  'nested (2,000 keys)': nested(40, 50),
  'typed values (2,000)': typedValues(2000),
  'secret, 40 keys merged from 2 anchors': mergedSecret(),
  'team, labels merged into annotations': mergedTeam,
};

const ENVELOPE = 'apiVersion: v1\nkind: X\n';

/** The review's bodies: N aliases to an empty map. */
function aliases(n: number): string {
  let text = `${ENVELOPE}e: &e {}\n`;
  for (let i = 0; i < n; i++) text += `x${i}: *e\n`;
  return text;
}

/** A 1,000-key anchor, N aliases to empty maps, then M maps merging the anchor. */
function anchorAliasesMerges(n: number, m: number): string {
  let text = `${ENVELOPE}e: &e {}\nb: &b {${Array.from({ length: 1000 }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`;
  for (let i = 0; i < m; i++) text += `m${i}: {<<: *b}\n`;
  for (let i = 0; i < n; i++) text += `x${i}: *e\n`;
  return text;
}

/** `aN: &aN {<<: *aN-1}` N times, then the top-level map merging the last. */
function mergeChain(n: number): string {
  let text = `${ENVELOPE}a0: &a0 {}\n`;
  for (let i = 1; i < n; i++) text += `a${i}: &a${i} {<<: *a${i - 1}}\n`;
  return `${text}<<: *a${n - 1}\n`;
}

/** Decodes once, returning CPU ms. */
function cpuMsOnce(decode: Decode, text: string): number {
  const cpu = process.cpuUsage();
  decode(text);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000;
}

function bombs(sides: readonly [string, Decode][]): void {
  const both: Record<string, string> = {
    '4,000 aliases to {} (43 KB)': aliases(4000),
    '1,000-key anchor, 300 aliases, 30 merges': anchorAliasesMerges(300, 30),
    'merge chain x1,000 (24 KB)': mergeChain(1000),
  };
  console.log('The review\'s bodies, one decode per side (CPU ms):');
  for (const [name, text] of Object.entries(both)) {
    const shown = sides.map(([side, d]) => `${side} ${cpuMsOnce(d, text).toFixed(0).padStart(7)} ms`).join('   ');
    console.log(`  ${name.padEnd(42)} ${shown}`);
  }
  const only: Record<string, string> = {
    '20,000 aliases to {}': aliases(20_000),
    'merge chain x5,000': mergeChain(5000),
    'merge chain x20,000 (567 KB)': mergeChain(20_000),
    'merge chain x60,000 (1.7 MB)': mergeChain(60_000),
  };
  console.log('Sizes the old build took minutes over (or overflowed its stack), this build only (CPU ms):');
  const mine = sides[sides.length - 1];
  for (const [name, text] of Object.entries(only)) {
    if (mine) console.log(`  ${name.padEnd(42)} ${mine[0]} ${cpuMsOnce(mine[1], text).toFixed(0).padStart(7)} ms`);
  }
}

interface Round {
  readonly cpuUsPerDecode: number;
  readonly decodesPerSecond: number;
}

function round(decode: Decode, text: string): Round {
  const start = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < DECODES; i++) decode(text);
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - start;
  return { cpuUsPerDecode: (used.user + used.system) / DECODES, decodesPerSecond: (DECODES * 1000) / ms };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

async function main(): Promise<void> {
  const baselineFile = resolve(args.baseline ?? '');
  const baseline = (await import(pathToFileURL(baselineFile).href)) as { decodeYAML: Decode };
  const sides: [string, Decode][] = [
    ['A baseline', baseline.decodeYAML],
    ['B this build', decodeYAML],
  ];
  for (const [name, text] of Object.entries(BODIES)) {
    if (args.only !== undefined && !name.includes(args.only)) continue;
    // Both sides must read the body alike (the bodies have no key the change reads otherwise).
    const [a, b] = sides.map(([, d]) => JSON.stringify(d(text).value));
    if (a !== b) throw new Error(`${name}: the two builds decode the body differently`);
    for (const [, d] of sides) round(d, text); // warm-up
    const rounds = new Map<string, Round[]>(sides.map(([s]) => [s, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [side, d] of sides) rounds.get(side)?.push(round(d, text));
    }
    console.log(`${name}, ${ROUNDS} rounds of ${DECODES} decodes (medians):`);
    for (const [side] of sides) {
      const rs = rounds.get(side) ?? [];
      const cpu = median(rs.map((x) => x.cpuUsPerDecode));
      const rate = median(rs.map((x) => x.decodesPerSecond));
      console.log(`  ${side.padEnd(13)} ${cpu.toFixed(1).padStart(8)} µs CPU/decode  ${rate.toFixed(0).padStart(7)} decodes/s`);
    }
  }
  if (args.bombs) bombs(sides);
}

await main();
