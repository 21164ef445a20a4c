// The command line of the field manager's A/B scripts (patchdup-ab.ts,
// smdorder-ab.ts): `--base <dir>`, the directory of another build's
// `pkg/registry/fieldmanager` (their headers say how to compile one), loaded beside
// this build's, and `--calls`/`--rounds` for compareAlternating.

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as current from '../../pkg/registry/fieldmanager/index.js';

export type Engine = typeof current;

export interface BaseRun {
  /** The other build's field manager (A). */
  readonly base: Engine;
  readonly calls: number;
  readonly rounds: number;
}

export async function loadBaseFieldManager(): Promise<BaseRun> {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' },
      calls: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '9' },
    },
  });
  if (!values.base) throw new Error('--base <dir>: the other build (see the header)');
  const base = (await import(
    pathToFileURL(resolve(values.base, 'pkg/registry/fieldmanager/index.js')).href
  )) as Engine;
  return { base, calls: Number(values.calls), rounds: Number(values.rounds) };
}
