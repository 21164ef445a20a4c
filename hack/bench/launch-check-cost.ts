// node dist/hack/bench/launch-check-cost.js [--base REV] [--rounds R]
//
// What the launcher check (hack/launch-calls.ts, run by hack/launchers.test.ts over
// every script under hack/ and e2e/) costs, against its version at REV (default
// cf63ea0^, the regular-expression reading before the TypeScript parse): REV's
// launch-calls.ts is transpiled from git into a temporary module and both read the
// same sources, already in memory. Rounds alternate the two (A, B, A, B, ...) so a
// noisy neighbour slows them alike; the first round of each is its cold cost (what a
// test run pays: JIT warm-up of TypeScript's parser included), the median of the rest
// its warm cost. CPU is process.cpuUsage() over each round (user + system). It also
// prints the server launches each version finds, which must agree on the flags.
// Starts no server.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';
import * as current from '../launch-calls.js';

type Check = Pick<typeof current, 'launchesOf'>;

const { values } = parseArgs({
  options: { base: { type: 'string', default: 'cf63ea0^' }, rounds: { type: 'string', default: '9' } },
});
const rounds = Math.max(2, Number(values.rounds));

/** The checker at a git revision, as a module (transpiled, its imports are node's own or typescript). */
async function checkAt(rev: string): Promise<{ check: Check; dispose(): void }> {
  const source = execFileSync('git', ['show', `${rev}:hack/launch-calls.ts`], { encoding: 'utf8' });
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  // Beside this script, so a bare import (typescript) resolves from the repository.
  const dir = mkdtempSync(join(import.meta.dirname, '.launch-check-base-'));
  const file = join(dir, 'launch-calls.mjs');
  writeFileSync(file, js);
  const check = (await import(pathToFileURL(file).href)) as Check;
  return { check, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The sources the check reads, as launchers.test.ts picks them (not the check's own, full of examples). */
function sources(): [string, string][] {
  const own = new Set([join('hack', 'launchers.test.ts'), join('hack', 'launch-calls.ts')]);
  return ['hack', 'e2e'].flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(?:[cm]?js|m?ts|sh)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('node_modules'))
      .map((f) => join(dir, f))
      .filter((f) => !own.has(f))
      .map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
  );
}

interface Round {
  readonly ms: number;
  readonly cpuUs: number;
  readonly launches: string[];
}

function round(check: Check, files: readonly [string, string][]): Round {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const launches: string[] = [];
  for (const [file, text] of files) {
    for (const c of check.launchesOf(file, text, SERVER_NODE_FLAGS)) {
      if (c.startsServer) launches.push(`${file}:${c.line} flags=${c.carriesFlags && !c.worker}`);
    }
  }
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuUs: used.user + used.system, launches };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

const base = await checkAt(values.base);
try {
  const files = sources();
  const sides: [string, Check][] = [
    [`base (${values.base})`, base.check],
    ['current', current],
  ];
  const results = new Map<string, Round[]>(sides.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++)
    for (const [name, check] of sides) results.get(name)?.push(round(check, files));
  console.log(`${files.length} sources under hack/ and e2e/, ${rounds} rounds each, alternating`);
  for (const [name, rs] of results) {
    const [cold, ...warm] = rs;
    console.log(
      `${name}: cold ${cold?.ms.toFixed(0)} ms (${((cold?.cpuUs ?? 0) / 1000).toFixed(0)} ms CPU), ` +
        `warm median ${median(warm.map((x) => x.ms)).toFixed(0)} ms (${(median(warm.map((x) => x.cpuUs)) / 1000).toFixed(0)} ms CPU, ` +
        `${(median(warm.map((x) => x.cpuUs)) / files.length).toFixed(0)} us CPU a source)`,
    );
    console.log(`  server launches: ${cold?.launches.join(', ') || 'none'}`);
  }
} finally {
  base.dispose();
}
