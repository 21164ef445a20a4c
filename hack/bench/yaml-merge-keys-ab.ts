// node dist/hack/bench/yaml-merge-keys-ab.js [--rounds R] [--calls N]
//
// What reading YAML keys as goyaml.v2 does costs, where this change could cost anything
// (docs/performance/yaml-keys-as-goyaml-cost.md). Three pairs, in process, rounds alternating (A, B, B,
// A, ...) with the median round counting and CPU µs per call from process.cpuUsage()
// (alternating-ab.ts):
//
// 1. A float map key's float32 digits, a batch of 304 values a call: the previous way
//    (toExponential at 1..9 digits until Math.fround reads the same float back, kept
//    below as the baseline) against Go's shortest computed exactly in integers
//    (yaml-scalars.ts `formatGoFloat`), over float32 values of every size (integers,
//    fractions, ties, subnormals, extremes).
// 2. A Global Secret-sized body with 40 data keys written out, against the same entries
//    merged from two anchored maps (`<<: [*a, *b]`, yaml-merge.ts): what a merge costs
//    over the text it saves.
// 3. A Team as kubectl would send it, against the same Team with one anchored label map
//    merged into its annotations: what a body pays once it has a merge key at all.
//
// The decode of bodies without merge keys, against the build before this change, is
// yaml-keys-ab.ts's (`--baseline`).

import { parseArgs } from 'node:util';
import { decodeYAML } from '../../pkg/apiserver/body.js';
import { formatGoFloat } from '../../pkg/apiserver/yaml-scalars.js';
import { compareAlternating } from './alternating-ab.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    calls: { type: 'string', default: '2000' },
  },
});
const ROUNDS = Number(args.rounds);
const CALLS = Number(args.calls);

/** The float32 formatting before this change: shortest digits by trial, which rounded twice and ties up. */
function previousFloat32(f: number): string {
  const abs = Math.abs(Math.fround(f));
  if (abs === 0) return '0';
  let shortest = abs.toExponential();
  for (let precision = 1; precision <= 9; precision++) {
    const e = abs.toExponential(precision - 1);
    if (Math.fround(Number(e)) === abs) {
      shortest = e;
      break;
    }
  }
  const [mantissa = '0', exponent = '0'] = shortest.split('e');
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${digits[0] ?? '0'}${tail}e${exp < 0 ? '-' : '+'}${Math.abs(exp).toString().padStart(2, '0')}`;
  }
  const point = exp + 1;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${digits}${'0'.repeat(point - digits.length)}`;
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

// Float32 values of every size: small integers, thousandths, large and tiny magnitudes, ties.
const floats: number[] = [];
for (let i = 1; i <= 50; i++) floats.push(i, i / 1000, i * 1e20, i * 1e-30, 7.6757812 * i, 5854.65625 * i);
floats.push(1.4e-45, 3.4028235e38, 1.1754944e-38, 16777216);

function secretBody(merged: boolean): string {
  const a: string[] = [];
  const b: string[] = [];
  for (let i = 0; i < 20; i++) a.push(`a${i}: dmFsdWUtYS0${i}`);
  for (let i = 0; i < 20; i++) b.push(`b${i}: dmFsdWUtYi0${i}`);
  const head = 'apiVersion: management.platform.dev/v1\nkind: SharedSecret\nmetadata:\n  name: s\n';
  if (!merged) return `${head}spec:\n  data:\n${[...a, ...b].map((l) => `    ${l}\n`).join('')}`;
  return (
    `${head}defaults:\n  a: &a {${a.join(', ')}}\n  b: &b {${b.join(', ')}}\n` +
    'spec:\n  data:\n    <<: [*a, *b]\n'
  );
}

function teamBody(merged: boolean): string {
  const labels = '{app.kubernetes.io/name: platform, app.kubernetes.io/part-of: infra}';
  return `apiVersion: management.platform.dev/v1
kind: Team
metadata:
  name: platform
  labels: ${merged ? `&l ${labels}` : labels}
  annotations:
${merged ? '    <<: *l\n' : '    app.kubernetes.io/name: platform\n    app.kubernetes.io/part-of: infra\n'}    example.dev/owner: sre
spec:
  displayName: Platform team
  users: [alice, bob, carol]
`;
}

// Both sides of each decode pair must read alike (key order aside: a merge sets its last
// map first), or the comparison means nothing.
const sorted = (v: unknown): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, w]) => [k, sorted(w)]))
    : v;
const same = (x: string, y: string, pick: (v: Record<string, unknown>) => unknown): void => {
  const left = JSON.stringify(sorted(pick(decodeYAML(x).value as Record<string, unknown>)));
  const right = JSON.stringify(sorted(pick(decodeYAML(y).value as Record<string, unknown>)));
  if (left !== right) throw new Error(`the bodies differ: ${left} / ${right}`);
};
same(secretBody(false), secretBody(true), (v) => v['spec']);
same(teamBody(false), teamBody(true), (v) => v['metadata']);

let sink = 0;
compareAlternating(
  [
    [
      ['float32 keys: previous (toExponential, fround)', () => floats.forEach((f) => (sink += previousFloat32(f).length))],
      ['float32 keys: Go shortest, exact', () => floats.forEach((f) => (sink += formatGoFloat(f, 32).length))],
    ],
  ],
  CALLS,
  ROUNDS,
  'batch of float keys',
);
const secretPlain = secretBody(false);
const secretMerged = secretBody(true);
const teamPlain = teamBody(false);
const teamMerged = teamBody(true);
compareAlternating(
  [
    [
      ['secret, 40 keys written out', () => (sink += decodeYAML(secretPlain).duplicates.length)],
      ['secret, 40 keys merged from 2 anchors', () => (sink += decodeYAML(secretMerged).duplicates.length)],
    ],
    [
      ['team, annotations written out', () => (sink += decodeYAML(teamPlain).duplicates.length)],
      ['team, annotations merging the labels', () => (sink += decodeYAML(teamMerged).duplicates.length)],
    ],
  ],
  Math.max(1, Math.floor(CALLS / 4)),
  ROUNDS,
  'decode',
);
if (sink < 0) console.log(sink);
