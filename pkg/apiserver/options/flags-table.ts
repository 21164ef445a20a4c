// The README's flag table, rendered from the same flag definitions the parser reads
// (the option groups' flags, see server-run-options.ts), so the
// documentation lists every flag the server has and cannot drift from it. The
// table sits between two markers in README.md; hack/flags-table.ts writes it there
// and flags-table.test.ts fails when the README's copy differs.

import { defaultText, FLAGS } from './flags.js';

export const FLAGS_TABLE_BEGIN =
  '<!-- flags:begin: generated from the option groups of pkg/apiserver/options by `npm run build && node dist/hack/flags-table.js` -->';
export const FLAGS_TABLE_END = '<!-- flags:end -->';

/** Text made safe for a Markdown table cell (`|` ends a cell, `<x>` reads as HTML). */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Markdown table: one row per flag, in FLAGS order, then --help. */
export function flagsTable(): string {
  const rows = [
    '| Flag | Default | Meaning |',
    '|---|---|---|',
    ...FLAGS.map((f) => {
      const text = defaultText(f);
      return `| \`--${f.name}\` | ${text ? `\`${cell(text)}\`` : ''} | ${cell(f.usage)} |`;
    }),
    '| `--help` | | Lists the flags and exits. |',
  ];
  return rows.join('\n');
}

/** The table between the markers of `readme`, or undefined when the markers are missing. */
export function readmeFlagsTable(readme: string): string | undefined {
  const begin = readme.indexOf(FLAGS_TABLE_BEGIN);
  const end = readme.indexOf(FLAGS_TABLE_END);
  if (begin < 0 || end < begin) return undefined;
  return readme.slice(begin + FLAGS_TABLE_BEGIN.length, end).trim();
}

/** `readme` with the table between the markers replaced by the current one. */
export function withFlagsTable(readme: string): string {
  const begin = readme.indexOf(FLAGS_TABLE_BEGIN);
  const end = readme.indexOf(FLAGS_TABLE_END);
  if (begin < 0 || end < begin)
    throw new Error(`README.md has no ${FLAGS_TABLE_BEGIN} ... ${FLAGS_TABLE_END} markers`);
  return `${readme.slice(0, begin + FLAGS_TABLE_BEGIN.length)}\n${flagsTable()}\n${readme.slice(end)}`;
}
