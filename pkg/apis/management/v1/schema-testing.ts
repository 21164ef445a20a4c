// For the schema tests of the kinds: walks a JSON schema the way kubectl explain
// and the OpenAPI publisher do, so a test can hold every field to a rule.

import { isObject } from '../../meta/types.js';

/** Visits every property schema with its dotted path (`spec.access[].verbs`). */
export function eachProperty(
  schema: Record<string, unknown>,
  path: string,
  visit: (path: string, prop: Record<string, unknown>) => void,
): void {
  const props = schema['properties'];
  if (isObject(props)) {
    for (const [name, prop] of Object.entries(props)) {
      if (!isObject(prop)) continue;
      const p = path ? `${path}.${name}` : name;
      visit(p, prop);
      eachProperty(prop, p, visit);
    }
  }
  for (const key of ['items', 'additionalProperties']) {
    const sub = schema[key];
    if (isObject(sub)) eachProperty(sub, `${path}[]`, visit);
  }
}
