// Durations as people write them on a command line: `30d`, `12h`, `1h30m`, `90s`,
// or a bare number of seconds. The API takes seconds.

import { UsageError } from './errors.js';

const UNIT_SECONDS: Record<string, number> = { w: 604_800, d: 86_400, h: 3_600, m: 60, s: 1 };

export function parseDurationSeconds(text: string, flag: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const parts = [...t.matchAll(/(\d+)([wdhms])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== t) {
    throw new UsageError(`${flag}: "${text}" is not a duration (examples: 30d, 12h, 1h30m, 3600)`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_SECONDS[p[2] ?? 's'] ?? 1), 0);
}

/** Seconds as the largest whole unit that fits, for listings: `30d`, `2h`, `45s`. */
export function formatSeconds(seconds: number): string {
  for (const [unit, size] of Object.entries(UNIT_SECONDS)) {
    if (unit !== 'w' && seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}
