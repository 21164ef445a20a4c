// Every relative link in README.md and docs/**/*.md leads somewhere: the file exists,
// and an `#anchor` names a heading of the target (GitHub's slugs). Every document a
// code comment or a document cites by path (`docs/performance/create-path.md`,
// `docs/design.md, "The house"`) exists, and so does every section it cites by title.
// A moved or renamed document or section fails here instead of in front of a reader.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';

import { anchorsOf, citationsOf, isExternal, linksOf, slug } from './docs-links.js';

// Tests run from the repository root.

/** Files under `dir` whose names end with one of `endings`, outside build output and dependencies. */
function filesUnder(dir: string, endings: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, endings));
    else if (endings.some((e) => name.endsWith(e))) out.push(path);
  }
  return out.sort();
}

const DOCUMENTS = ['README.md', ...filesUnder('docs', ['.md'])];
// Where code cites documents: the sources, the scripts and the CI entry. This file's
// own examples of broken citations are not citations.
const CODE = [
  ...['cmd', 'pkg', 'hack', 'e2e', join('console', 'src'), '.ci'].flatMap((dir) =>
    existsSync(dir) ? filesUnder(dir, ['.ts', '.tsx', '.mjs', '.js', '.sh', 'run']) : [],
  ),
  'eslint.config.js',
].filter((f) => f !== join('hack', 'docs-links.test.ts'));

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) anchorCache.set(file, (anchors = anchorsOf(readFileSync(file, 'utf8'))));
  return anchors;
}

/** What is wrong with the relative links of `doc` (its text given), one line each. */
function brokenLinks(doc: string, markdown: string): { broken: string[]; followed: number } {
  const broken: string[] = [];
  let followed = 0;
  for (const { target, line } of linksOf(markdown)) {
    if (isExternal(target)) continue;
    followed++;
    const [path = '', anchor] = target.split('#');
    const file = path === '' ? doc : normalize(join(dirname(doc), decodeURIComponent(path)));
    // A link within the document reads the text given, not the file on disk.
    const anchors = (): Set<string> => (path === '' ? anchorsOf(markdown) : anchorsOfFile(file));
    if (path !== '' && !existsSync(file)) broken.push(`${doc}:${line}: ${target}: no such file ${file}`);
    else if (anchor && file.endsWith('.md') && !anchors().has(anchor)) {
      broken.push(`${doc}:${line}: ${target}: no heading #${anchor} in ${file}`);
    }
  }
  return { broken, followed };
}

/** What is wrong with the documents and sections `file` (its text given) cites, one line each. */
function brokenCitations(file: string, text: string): { broken: string[]; cited: number } {
  const broken: string[] = [];
  const citations = citationsOf(text);
  for (const { path, titles, line } of citations) {
    if (!existsSync(path)) {
      broken.push(`${file}:${line}: cites ${path}, which does not exist`);
      continue;
    }
    for (const title of titles) {
      if (!anchorsOfFile(path).has(slug(title))) {
        broken.push(`${file}:${line}: cites "${title}" in ${path}, which has no such heading`);
      }
    }
  }
  return { broken, cited: citations.length };
}

test('every relative link in README.md and docs/ points at a file, and at a heading for an anchor', () => {
  const broken: string[] = [];
  let followed = 0;
  for (const doc of DOCUMENTS) {
    const found = brokenLinks(doc, readFileSync(doc, 'utf8'));
    broken.push(...found.broken);
    followed += found.followed;
  }
  assert.deepEqual(broken, []);
  assert.ok(followed >= 50, `followed ${followed} links: the link pattern still finds them`);
  assert.ok(DOCUMENTS.includes(join('docs', 'performance', 'first-round.md')), 'docs/ is read to its depth');
});

test('every document cited by path in code or in the docs exists, with every section cited by title', () => {
  const broken: string[] = [];
  let cited = 0;
  for (const file of [...CODE, ...DOCUMENTS]) {
    const found = brokenCitations(file, readFileSync(file, 'utf8'));
    broken.push(...found.broken);
    cited += found.cited;
  }
  assert.deepEqual(broken, []);
  assert.ok(cited >= 30, `found ${cited} citations: the citation pattern still finds them`);
});

test('the link check notices a missing file and a missing heading', () => {
  const links = linksOf(
    'See [a](docs/none.md) and [b](#nowhere), not `[c](x.md)`.\n```\n[d](y.md)\n```\n[e](#here)',
  );
  assert.deepEqual(
    links.map((l) => l.target),
    ['docs/none.md', '#nowhere', '#here'],
  );
  const { broken } = brokenLinks('README.md', '# Here\n\n[a](docs/none.md), [b](#nowhere), [c](#here)');
  assert.deepEqual(broken, [
    'README.md:3: docs/none.md: no such file docs/none.md',
    'README.md:3: #nowhere: no heading #nowhere in README.md',
  ]);
});

test("headings get GitHub's anchors, duplicates suffixed", () => {
  assert.ok(anchorsOf('## Who may do what\n').has('who-may-do-what'));
  assert.ok(anchorsOf('## `kubectl auth can-i`: may I?\n').has('kubectl-auth-can-i-may-i'));
  assert.deepEqual(
    [...anchorsOf('# Notes\n## Figures\n### Figures\n## Figures\n```\n# Figures\n```\n## Figures 1\n')],
    ['notes', 'figures', 'figures-1', 'figures-2', 'figures-1-1'],
  );
  assert.equal(
    slug('Second round (issue 17): the run after the fourth get pass'),
    'second-round-issue-17-the-run-after-the-fourth-get-pass',
  );
  assert.equal(slug('Unary calls on node:http2'), 'unary-calls-on-nodehttp2');
  assert.equal(
    slug("Certificate bindings on the aggregator's path (defects, second pass)"),
    'certificate-bindings-on-the-aggregators-path-defects-second-pass',
  );
  assert.equal(slug('CPU µs per get, 1.5× [the ladder](x.md)'), 'cpu-µs-per-get-15-the-ladder');
});

test('the citation check reads paths and titles across comment lines, and notices what is gone', () => {
  const comment = [
    '// the lean client (docs/performance.md, "The etcd client", "Unary calls on',
    '// node:http2"); the A/B of "The create path, third pass" in docs/performance/x.md.',
    ' * See shared/docs/upstream.md and docs/design.md.',
  ].join('\n');
  assert.deepEqual(citationsOf(comment), [
    { path: 'docs/performance.md', titles: ['The etcd client', 'Unary calls on node:http2'], line: 1 },
    { path: 'docs/performance/x.md', titles: ['The create path, third pass'], line: 2 },
    { path: 'docs/design.md', titles: [], line: 3 },
  ]);
  const { broken } = brokenCitations('pkg/x.ts', comment);
  assert.deepEqual(broken, [
    'pkg/x.ts:1: cites "The etcd client" in docs/performance.md, which has no such heading',
    'pkg/x.ts:1: cites "Unary calls on node:http2" in docs/performance.md, which has no such heading',
    'pkg/x.ts:2: cites docs/performance/x.md, which does not exist',
  ]);
  assert.deepEqual(brokenCitations('pkg/y.ts', '// docs/performance.md, "How to rerun"').broken, []);
});
