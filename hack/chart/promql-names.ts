// The metric names a PromQL expression reads, and whether a server's /metrics
// exposition has them: the chart's alerts and dashboard must only name metrics the
// server really exports, or they silently match nothing.
//
// Not a PromQL parser: strings, label matchers, ranges, grouping clauses and Grafana
// variables are removed, and what is left that looks like an identifier and is not a
// function call, a keyword or a number is a metric name. That is enough for the
// expressions the chart writes, and errs towards finding too many names (a test
// failure), never too few.

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'atan2',
  'inf',
  'nan',
]);

/** Series Prometheus makes itself for every target, not the server. */
const PROMETHEUS_SERIES = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/\d[\w.]*|[a-zA-Z_:][\w:]*/g)) {
    const token = m[0];
    if (/^\d/.test(token) || KEYWORDS.has(token.toLowerCase())) continue;
    const rest = stripped.slice((m.index ?? 0) + token.length);
    if (/^\s*\(/.test(rest)) continue; // a function or an aggregation
    names.add(token);
  }
  return [...names];
}

/** Metric name -> type, from the `# TYPE` lines of a Prometheus text exposition. */
export function exposedTypes(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const line of exposition.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)/.exec(line);
    if (m?.[1] && m[2]) types.set(m[1], m[2]);
  }
  return types;
}

/**
 * Why `name` cannot be read from the exposition, or undefined when it can: a
 * histogram is read through its _bucket, _sum and _count series, never by its own name.
 */
export function problemWith(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (PROMETHEUS_SERIES.has(name)) return undefined;
  const type = types.get(name);
  if (type === 'histogram' || type === 'summary')
    return `${name} is a ${type}: read its _bucket, _sum or _count`;
  if (type !== undefined) return undefined;
  const suffix = /^(.+)_(bucket|sum|count)$/.exec(name);
  if (suffix?.[1]) {
    const base = types.get(suffix[1]);
    if (base === 'histogram' || (base === 'summary' && suffix[2] !== 'bucket')) return undefined;
  }
  return `${name} is not exported by the server`;
}
