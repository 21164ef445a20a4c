// Durations as Kubernetes takes them in flags and query parameters (Go's
// time.ParseDuration): a sequence of decimal numbers with units, "90s", "1m30s",
// "1.5h", "500ms". A bare number is refused: its unit would be a guess.

const UNITS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    part.lastIndex = pos;
    const m = part.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * (UNITS[m[2] ?? ''] ?? NaN);
    pos = part.lastIndex;
  }
  return pos === 0 || !Number.isFinite(total) ? undefined : total;
}
