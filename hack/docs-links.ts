// What the documentation's links and citations are made of, read the way GitHub reads
// them: relative Markdown links and the anchors GitHub gives headings, and the places
// where a code comment or a document cites a document by its path under docs/ and a
// section of it by title (the path, then the title in double quotes; or the title,
// "in", then the path).
// hack/docs-links.test.ts follows every one of them, so a moved or renamed document or
// section fails `npm test` instead of in front of a reader.

/** A link or citation found in a file, with its 1-based line. */
export interface Found {
  target: string;
  line: number;
}

/** A document cited by path, and the section titles cited with it. */
export interface Citation {
  path: string;
  titles: string[];
  line: number;
}

/** A heading's text as GitHub renders it: a link's text stays, its target goes. */
function headingText(heading: string): string {
  return heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
}

/**
 * GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped
 * (letters, digits, `_` and `-` stay), each space a dash.
 */
export function slug(heading: string): string {
  return headingText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker.slice(0, 3) : undefined;
      return;
    }
    if (fence === undefined) out.push({ text, line: i + 1 });
  });
  return out;
}

/**
 * Every anchor a document's headings get, in order: a heading whose slug was taken
 * already gets `-1`, `-2`, ... as GitHub suffixes duplicates.
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const suffixes = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (!m) continue;
    const base = slug(m[1] ?? '');
    let anchor = base;
    if (anchors.has(anchor)) {
      let n = suffixes.get(base) ?? 0;
      do anchor = `${base}-${++n}`;
      while (anchors.has(anchor));
      suffixes.set(base, n);
    }
    anchors.add(anchor);
  }
  return anchors;
}

/** Markdown links `[text](target)` outside code blocks and code spans. */
export function linksOf(markdown: string): Found[] {
  const out: Found[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ target: m[1] ?? '', line });
  }
  return out;
}

/** Whether a link leaves the repository (a URL with a scheme), and so is not followed. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target); // https:, mailto:
}

// A document's path from the repository's root, as comments and documents cite it.
const DOC_PATH = String.raw`docs/[\w./-]*\.md`;
// One or more quoted titles: "A", "B" (a title does not span a quote).
const TITLES = String.raw`"[^"\n]+"(?:,\s*"[^"\n]+")*`;
const AFTER = new RegExp(String.raw`(?<![\w./-])(${DOC_PATH}),?\s+(${TITLES})`, 'g');
const BEFORE = new RegExp(String.raw`(${TITLES})\s+in\s+(${DOC_PATH})`, 'g');
const PATH = new RegExp(String.raw`(?<![\w./-])(${DOC_PATH})`, 'g');

/**
 * Every citation of a document by its path from the repository's root (`docs/….md`),
 * with the section titles quoted right after it (`docs/….md, "A", "B"`) or right before
 * it (`"A" in docs/….md`). A comment's line breaks (`//`, ` * `) and a Markdown
 * paragraph's are read as spaces, so a title may wrap.
 */
export function citationsOf(text: string): Citation[] {
  // Join each line to the one before with its comment marker removed, keeping offsets
  // to lines: one space stands for the line break and the marker.
  const lines = text.split('\n');
  let joined = '';
  const starts: number[] = [];
  for (const [i, raw] of lines.entries()) {
    const body = i === 0 ? raw : raw.replace(/^\s*(?:\/\/+|\*(?!\/)|#)?\s*/, '');
    if (i > 0) joined += ' ';
    starts.push(joined.length);
    joined += body;
  }
  const lineAt = (offset: number): number => {
    let lo = 0;
    while (lo + 1 < starts.length && (starts[lo + 1] ?? Infinity) <= offset) lo++;
    return lo + 1;
  };
  const titlesOf = (quoted: string): string[] => [...quoted.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '');

  const byOffset = new Map<number, Citation>();
  for (const m of joined.matchAll(PATH)) {
    byOffset.set(m.index, { path: m[1] ?? '', titles: [], line: lineAt(m.index) });
  }
  for (const m of joined.matchAll(AFTER)) byOffset.get(m.index)?.titles.push(...titlesOf(m[2] ?? ''));
  for (const m of joined.matchAll(BEFORE)) {
    const pathOffset = m.index + m[0].length - (m[2] ?? '').length;
    byOffset.get(pathOffset)?.titles.push(...titlesOf(m[1] ?? ''));
  }
  return [...byOffset.values()];
}
