// The image definition cannot be built here (no container runtime), so its
// conventions are checked where they can be read: multi-stage, production
// dependencies only, non-root with the uid the chart expects, the server as entry
// point, and a build context holding everything the build copies and nothing else.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { chartDir, repoRoot } from './render.js';

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** Whether .dockerignore keeps a top-level path in the build context (last matching rule wins). */
function inContext(rules: string[], path: string): boolean {
  let included = true;
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = (negated ? rule.slice(1) : rule).replace(/\/$/, '');
    const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    if (re.test(path)) included = negated;
  }
  return included;
}

describe('Dockerfile', () => {
  const root = repoRoot();
  const steps = instructions(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const froms = steps.map((s, i) => ({ ...s, i })).filter((s) => s.op === 'FROM');
  const lastFrom = froms.at(-1)?.i ?? 0;
  const final = steps.slice(lastFrom);
  const build = steps.slice(0, lastFrom);

  it('builds in one stage and runs from another', () => {
    assert.ok(froms.length >= 2, 'multi-stage');
    assert.match(froms[0]?.args ?? '', /^node:20\b.* AS build$/);
    assert.ok(final.some((s) => s.op === 'COPY' && s.args.includes('--from=build')));
    assert.equal(
      final.some((s) => s.op === 'RUN' && /npm (ci|install)/.test(s.args)),
      false,
      'no install in the runtime stage',
    );
  });

  it('ships production dependencies only', () => {
    assert.ok(build.some((s) => s.op === 'RUN' && /npm prune --omit=dev/.test(s.args)));
    const copiedModules = final.find((s) => s.op === 'COPY' && s.args.includes('node_modules'));
    assert.ok(copiedModules, 'node_modules come from the pruned build stage');
  });

  it('runs as the non-root uid the chart runs the pod as', () => {
    const user = final.filter((s) => s.op === 'USER').at(-1)?.args ?? 'root';
    const uid = Number(user.split(':')[0]);
    assert.ok(Number.isInteger(uid) && uid !== 0, `USER ${user} is a non-root uid`);
    const values = YAML.parse(readFileSync(join(chartDir(), 'values.yaml'), 'utf8')) as {
      podSecurityContext: { runAsUser: number };
      server: { securePort: number };
    };
    assert.equal(uid, values.podSecurityContext.runAsUser);
    assert.ok(final.some((s) => s.op === 'EXPOSE' && s.args === String(values.server.securePort)));
  });

  it('starts the server compiled from cmd/apiserver/main.ts', () => {
    const entry = final.find((s) => s.op === 'ENTRYPOINT');
    assert.ok(entry);
    const argv = JSON.parse(entry.args) as string[];
    assert.equal(argv.at(-1), '/app/dist/cmd/apiserver/main.js');
    assert.ok(existsSync(join(root, 'cmd', 'apiserver', 'main.ts')));
    const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    assert.deepEqual([tsconfig.compilerOptions.rootDir, tsconfig.compilerOptions.outDir], ['.', 'dist']);
  });

  it('builds the console with the server (npm run build), so dist/console ships in the image', () => {
    assert.ok(build.some((s) => s.op === 'RUN' && /npm run build\b/.test(s.args)));
    assert.ok(build.some((s) => s.op === 'COPY' && /^console\s/.test(s.args)));
    assert.ok(final.some((s) => s.op === 'COPY' && /--from=build \/src\/dist /.test(s.args)));
  });

  it('has a build context with every file it copies and without node_modules, dist, data or .git', () => {
    const rules = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const sources = build
      .filter((s) => s.op === 'COPY' && !s.args.includes('--from'))
      .flatMap((s) => s.args.split(/\s+/).slice(0, -1));
    assert.ok(sources.length > 0);
    for (const src of sources) {
      assert.ok(existsSync(join(root, src)), `${src} exists`);
      assert.ok(inContext(rules, src), `${src} is in the build context`);
    }
    for (const excluded of ['node_modules', 'dist', 'data', '.git', '.tmp', 'charts']) {
      assert.equal(inContext(rules, excluded), false, `${excluded} is kept out of the build context`);
    }
  });
});
