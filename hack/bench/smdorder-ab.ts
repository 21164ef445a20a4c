// node dist/hack/bench/smdorder-ab.js --base <dir> [--calls N] [--rounds R]
//
// What following structured-merge-diff 4.4.2 in server-side apply costs
// (docs/performance/apply-as-smd-4-4-2-cost.md): the field manager of this build (B) against the
// one of another build (A, `--base`: the directory holding that build's
// `pkg/registry/fieldmanager`), in one process. B checks the applied configuration
// and the live object against the schema before merging (upstream's typed values,
// for its error wording), walks merged lists in 4.4.2's order and decides "nothing
// changed" by value. On a Team of 40 users (a set) applied by a second manager:
//   - apply: the configuration reorders and adds users (forced);
//   - apply unchanged: the manager applies what it applied before;
//   - update: a non-apply write adding one user (no change expected: control).
// Rounds alternate A and B (compareAlternating), median CPU microseconds per call.
//
// The base engine, from the commit before the change, compiled on its own:
//   rm -rf /tmp/so-base && mkdir -p /tmp/so-base && git archive 5b98ed0 pkg | tar -x -C /tmp/so-base
//   echo '{"type":"module"}' > /tmp/so-base/package.json
//   npx tsc --outDir /tmp/so-base/dist --rootDir /tmp/so-base --module nodenext --target es2022 \
//     --strict --skipLibCheck --types node /tmp/so-base/pkg/registry/fieldmanager/index.ts
//   node dist/hack/bench/smdorder-ab.js --base /tmp/so-base/dist

import type { KubeObject } from '../../pkg/apis/meta/types.js';
import * as current from '../../pkg/registry/fieldmanager/index.js';
import { managementKinds } from '../../pkg/registry/management/kinds.js';
import { compareAlternating, type Variant } from './alternating-ab.js';
import { loadBaseFieldManager, type Engine } from './fieldmanager-base.js';

const { base, calls, rounds } = await loadBaseFieldManager();

const GROUP = 'management.platform.dev';
const apiVersion = `${GROUP}/v1`;
const schema = managementKinds(GROUP).find((k) => k.info.kind === 'Team')?.schema;
if (!schema) throw new Error('no Team kind');

const users = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => `user-${from + i}`);
const config = (list: string[]): Record<string, unknown> => ({
  apiVersion,
  kind: 'Team',
  metadata: { name: 'platform' },
  spec: { displayName: 'Platform', users: list },
});

function variants(engine: Engine): Record<'apply' | 'unchanged' | 'update', () => void> {
  const fm = new engine.FieldManager({ schema: schema!, apiVersion, kind: 'Team' });
  const empty = { apiVersion, kind: 'Team', metadata: {} } as KubeObject;
  const created = fm.apply(empty, config(users(0, 40)), 'creator', false);
  const live = fm.apply(created, config(users(0, 10)), 'gitops', true);
  const next = structuredClone(live) as unknown as { spec: { users: string[] } } & KubeObject;
  next.spec.users = [...next.spec.users, 'user-new'];
  return {
    apply: () => void fm.apply(live, config([...users(5, 10).reverse(), 'user-x']), 'gitops', true),
    unchanged: () => void fm.apply(live, config(users(0, 10)), 'gitops', false),
    update: () => void fm.update(live, structuredClone(next), 'editor'),
  };
}

const a = variants(base);
const b = variants(current);
const pairs: [Variant, Variant][] = (['apply', 'unchanged', 'update'] as const).map((k) => [
  [`A ${k}`, a[k]],
  [`B ${k}`, b[k]],
]);
compareAlternating(pairs, calls, rounds);
