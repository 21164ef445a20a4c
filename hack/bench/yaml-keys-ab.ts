// node dist/hack/bench/yaml-keys-ab.js --baseline <other build's dist/pkg/apiserver/body.js>
//                                      [--rounds R] [--decodes N] [--only <body name part>]
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
// process.cpuUsage() over each round's window.

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

const BODIES: Record<string, string> = {
  'team (13 keys)': team,
  'secret (200 data keys)': secret(200),
  'nested (2,000 keys)': nested(40, 50),
  'typed values (2,000)': typedValues(2000),
};

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
}

await main();
