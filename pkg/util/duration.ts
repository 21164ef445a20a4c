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

/**
 * `ms` as Go's time.Duration.String() writes it ("1m0s", "24h0m0s", "30s", "1.5s",
 * "500ms"), which is how kube-apiserver's --help shows a duration flag's default.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1) return `${sign}${trimmed(rest * 1000)}µs`;
  if (rest < 1000) return `${sign}${trimmed(rest)}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  // Go writes the larger units only when present, and then every smaller one ("1h0m0s").
  const seconds = `${trimmed(rest / 1000)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return sign + seconds;
}

/** A number without floating-point noise in its last digits (0.1 + 0.2 prints 0.3). */
function trimmed(n: number): string {
  return String(Number(n.toFixed(9)));
}
