// Reads the server's OpenAPI v3 document the way `kubectl explain` does (find the
// component whose x-kubernetes-group-version-kind names the kind, then walk the
// properties), so a test can compare what kubectl prints with what the server says.

type Schema = Record<string, unknown>;

export interface OpenAPIV3Doc {
  components?: { schemas?: Record<string, Schema> };
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Follows `$ref` and single-element `allOf` wrappers (how generated schemas attach descriptions). */
function resolve(doc: OpenAPIV3Doc, schema: Schema): Schema {
  let s = schema;
  for (let hops = 0; hops < 20; hops++) {
    const ref = s['$ref'];
    if (typeof ref === 'string') {
      const name = ref.replace(/^#\/components\/schemas\//, '');
      const target = doc.components?.schemas?.[name];
      if (!target) throw new Error(`unresolvable $ref ${ref}`);
      s = target;
      continue;
    }
    const allOf = s['allOf'];
    if (Array.isArray(allOf) && allOf.length === 1 && isSchema(allOf[0]) && s['properties'] === undefined) {
      s = allOf[0];
      continue;
    }
    return s;
  }
  throw new Error('$ref cycle');
}

export function kindSchema(doc: OpenAPIV3Doc, group: string, kind: string): Schema {
  for (const schema of Object.values(doc.components?.schemas ?? {})) {
    const gvks = schema['x-kubernetes-group-version-kind'];
    if (Array.isArray(gvks) && gvks.some((g) => isSchema(g) && g['group'] === group && g['kind'] === kind)) {
      return schema;
    }
  }
  throw new Error(
    `no schema in the OpenAPI document carries x-kubernetes-group-version-kind ${group}/${kind}`,
  );
}

/**
 * The schema at a dotted field path below a kind (`spec.data`), with the
 * description found on the property itself or on what it refers to.
 */
export function fieldSchema(doc: OpenAPIV3Doc, group: string, kind: string, path: string): Schema {
  let current: Schema = kindSchema(doc, group, kind);
  for (const part of path.split('.')) {
    let resolved = resolve(doc, current);
    const items = resolved['items'];
    if (resolved['type'] === 'array' && isSchema(items)) resolved = resolve(doc, items);
    const props = resolved['properties'];
    const next = isSchema(props) ? props[part] : undefined;
    if (!isSchema(next)) throw new Error(`${kind} has no field ${path} (stopped at ${part})`);
    const description = next['description'];
    const target = resolve(doc, next);
    current = typeof description === 'string' ? { ...target, description } : target;
  }
  return current;
}

/** Field names directly under a path ('' = the kind itself). */
export function fieldNames(doc: OpenAPIV3Doc, group: string, kind: string, path: string): string[] {
  let s = path === '' ? resolve(doc, kindSchema(doc, group, kind)) : fieldSchema(doc, group, kind, path);
  const items = s['items'];
  if (s['type'] === 'array' && isSchema(items)) s = resolve(doc, items);
  const props = s['properties'];
  return isSchema(props) ? Object.keys(props) : [];
}

/** Collapses all whitespace, so text wrapped by kubectl compares equal to the source text. */
export function normalizeSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
