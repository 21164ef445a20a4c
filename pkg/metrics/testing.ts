// Reading the Prometheus text exposition in tests: one sample by name and labels.

/** Labels of one sample line: `name{a="x",b="y"} 3` -> {a: 'x', b: 'y'}. */
function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) labels[m[1] ?? ''] = (m[2] ?? '').replace(/\\(.)/g, '$1');
  return labels;
}

/**
 * The value of the one sample of `name` whose labels include `labels` exactly as
 * given (others may be present), summed over every match; undefined when none.
 */
export function sample(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let total: number | undefined;
  for (const line of exposition.split('\n')) {
    if (line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    const metric = brace < 0 ? line.slice(0, space) : line.slice(0, brace);
    if (metric !== name) continue;
    const have = brace < 0 ? {} : parseLabels(line.slice(brace, line.lastIndexOf('}') + 1));
    if (!Object.entries(labels).every(([k, v]) => have[k] === v)) continue;
    total = (total ?? 0) + Number(line.slice(space + 1));
  }
  return total;
}

/** The request metrics' labels of a GET of one object of `resource` in `<group>/v1`, answered `code`. */
export function objectGetLabels(group: string, resource: string, code: string): Record<string, string> {
  return {
    verb: 'GET',
    group,
    version: 'v1',
    resource,
    subresource: '',
    scope: 'resource',
    component: 'apiserver',
    code,
  };
}
