// Printing results: `-o json` and `-o yaml` for data, and kubectl-style aligned
// columns for people.

import { stringify } from 'yaml';
import { UsageError } from './errors.js';
import type { Output } from './io.js';

export const OUTPUT_FORMATS = ['json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(value: string | undefined): OutputFormat | undefined {
  if (value === undefined) return undefined;
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`unknown output format "${value}": use one of ${OUTPUT_FORMATS.join(', ')}`);
}

export function formatData(value: unknown, format: OutputFormat): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  return stringify(value, { lineWidth: 0 });
}

export function printData(out: Output, value: unknown, format: OutputFormat): void {
  out.write(formatData(value, format));
}

/** Columns separated by three spaces, like kubectl's printer. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
