// Every relative link in README.md and docs/*.md leads somewhere: the file exists,
// and an `#anchor` names a heading of the target (GitHub's slugs). A moved or
// renamed document fails here instead of in front of a reader.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';

// Tests run from the repository root.
const DOCUMENTS = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...withoutCode.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

/** Markdown links `[text](target)` outside code blocks and code spans, with their line. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let inFence = false;
  markdown.split('\n').forEach((text, i) => {
    if (text.startsWith('```')) inFence = !inFence;
    if (inFence) return;
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ target: m[1] ?? '', line: i + 1 });
  });
  return out;
}

test('every relative link in README.md and docs/ points at a file, and at a heading for an anchor', () => {
  const broken: string[] = [];
  let followed = 0;
  for (const doc of DOCUMENTS) {
    const markdown = readFileSync(doc, 'utf8');
    for (const { target, line } of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      followed++;
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? doc : normalize(join(dirname(doc), decodeURIComponent(path)));
      if (!existsSync(file)) {
        broken.push(`${doc}:${line}: ${target}: no such file ${file}`);
        continue;
      }
      if (anchor && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${doc}:${line}: ${target}: no heading #${anchor} in ${file}`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(followed >= 5, `followed ${followed} links: the link pattern still finds them`);
});

test('the link check itself notices a missing file and a missing heading', () => {
  const links = linksOf('See [a](docs/none.md) and [b](#nowhere), not `[c](x.md)`.\n```\n[d](y.md)\n```');
  assert.deepEqual(
    links.map((l) => l.target),
    ['docs/none.md', '#nowhere'],
  );
  assert.ok(anchorsOf('## Who may do what\n').has('who-may-do-what'));
  assert.ok(anchorsOf('## `kubectl auth can-i`: may I?\n').has('kubectl-auth-can-i-may-i'));
});
