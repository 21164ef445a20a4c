// Reads kubectl's human-readable tables. Columns are aligned by tabwriter, so a
// header's offset is where each of its cells starts; splitting on runs of spaces
// would break on headers such as "DISPLAY NAME" and on empty cells.

export interface ParsedTable {
  readonly headers: readonly string[];
  readonly rows: ReadonlyArray<Readonly<Record<string, string>>>;
}

export function parseTable(text: string): ParsedTable {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0];
  if (header === undefined) return { headers: [], rows: [] };
  const starts: number[] = [];
  const headers: string[] = [];
  const re = /\S+(?: \S+)*/g;
  for (let m = re.exec(header); m !== null; m = re.exec(header)) {
    starts.push(m.index);
    headers.push(m[0]);
  }
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    headers.forEach((h, i) => {
      const from = starts[i] ?? 0;
      const to = starts[i + 1] ?? line.length;
      row[h] = line.slice(from, i + 1 < headers.length ? to : undefined).trim();
    });
    return row;
  });
  return { headers, rows };
}
