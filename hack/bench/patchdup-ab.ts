// node dist/hack/bench/patchdup-ab.js --base <dir> [--calls N] [--rounds R]
//
// What recording duplicate keys as structured-merge-diff 4.4 does costs the field
// manager (docs/performance/duplicate-keys-in-patches-cost.md) on the writes every request makes: the
// engine of this build (B) against the engine of another build (A, `--base`: the
// directory holding that build's `pkg/registry/fieldmanager`), in one process, on a
// Team with 20 users, 5 groups and 3 owner references (sets and a list-map, the lists
// the change walks differently):
//   - update: a non-apply write (create, update, patch) changing one set member;
//   - apply: a server-side apply of the team's spec by a second manager;
//   - patch with a duplicate: the update of a patch that repeats an owner reference
//     (B only: A refuses it and records nothing, so there is no A to compare).
// Rounds alternate A and B (compareAlternating), median CPU microseconds per call.
//
// The base engine, from the commit before the change, compiled on its own:
//   rm -rf /tmp/pd-base && mkdir -p /tmp/pd-base && git archive <commit> pkg | tar -x -C /tmp/pd-base
//   echo '{"type":"module"}' > /tmp/pd-base/package.json
//   npx tsc --outDir /tmp/pd-base/dist --rootDir /tmp/pd-base --module nodenext --target es2022 \
//     --strict --skipLibCheck --types node /tmp/pd-base/pkg/registry/fieldmanager/index.ts
//   node dist/hack/bench/patchdup-ab.js --base /tmp/pd-base/dist

import type { KubeObject } from '../../pkg/apis/meta/types.js';
import * as current from '../../pkg/registry/fieldmanager/index.js';
import { managementKinds } from '../../pkg/registry/management/kinds.js';
import { compareAlternating, type Variant } from './alternating-ab.js';
import { loadBaseFieldManager, type Engine } from './fieldmanager-base.js';

const { base, calls, rounds } = await loadBaseFieldManager();

const GROUP = 'management.platform.dev';
const team = managementKinds(GROUP).find((k) => k.info.kind === 'Team');
if (!team) throw new Error('no Team kind');
const apiVersion = `${GROUP}/v1`;

const ref = (i: number): Record<string, unknown> => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'User',
  name: `owner-${i}`,
  uid: `00000000-0000-0000-0000-00000000000${i}`,
});

function teamObject(users: number, refs: readonly Record<string, unknown>[]): KubeObject {
  return {
    apiVersion,
    kind: 'Team',
    metadata: { name: 'platform', labels: { tier: 'ci' }, ownerReferences: [...refs] },
    spec: {
      displayName: 'Platform',
      users: Array.from({ length: users }, (_, i) => `user-${i}`),
      groups: Array.from({ length: 5 }, (_, i) => `group-${i}`),
    },
  } as unknown as KubeObject;
}

const refs = [ref(1), ref(2), ref(3)];

/** The three calls on one engine, each on a live object that already records its creator. */
function calls3(engine: Engine): { update: () => void; apply: () => void; duplicate: () => void } {
  const fm = new engine.FieldManager({ schema: team!.schema, apiVersion, kind: 'Team' });
  const empty = { apiVersion, kind: 'Team', metadata: {} } as KubeObject;
  const live = fm.update(empty, teamObject(20, refs), 'creator');
  const changed = teamObject(21, refs);
  changed.metadata.managedFields = live.metadata.managedFields;
  const repeated = teamObject(20, [...refs, ref(2)]);
  repeated.metadata.managedFields = live.metadata.managedFields;
  const config = {
    apiVersion,
    kind: 'Team',
    metadata: { name: 'platform' },
    spec: { displayName: 'Platform', users: ['user-0', 'user-99'] },
  };
  return {
    update: () => void fm.update(live, structuredClone(changed), 'editor'),
    apply: () => void fm.apply(live, config, 'gitops', true),
    duplicate: () => void fm.update(live, structuredClone(repeated), 'editor'),
  };
}

const a = calls3(base);
const b = calls3(current);
const pairs: [Variant, Variant][] = [
  [
    ['A update (one set member)', a.update],
    ['B update (one set member)', b.update],
  ],
  [
    ['A apply (forced, second manager)', a.apply],
    ['B apply (forced, second manager)', b.apply],
  ],
  [
    ['B update (unchanged)', b.update],
    ['B update (repeats an owner reference)', b.duplicate],
  ],
];
compareAlternating(pairs, calls, rounds);
