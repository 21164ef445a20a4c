// Secret material never reaches an audit sink, at any level. Before an object is put
// into an event it goes through here: the values of the fields that carry secrets
// are replaced with REDACTED_VALUE, their keys kept, so an auditor still sees which
// Global Secret keys a write touched, that a key or token was issued, and what else
// changed. Upstream has no such step (Secrets are simply kept at Metadata by policy);
// here it holds whatever the policy says, because an operator's catch-all
// RequestResponse rule must not turn the audit log into a copy of every secret.
//
// The fields are found by shape, on every object whatever its `kind` claims: a body
// that names another kind, or none, is redacted all the same.

/** What a secret value becomes in an audit event (not valid base64, so never mistaken for data). */
export const REDACTED_VALUE = '<redacted>';

/**
 * The secret fields, as JSON pointers into an object: every value of a Global
 * Secret's data, an access key (plain in the response that created it, hashed
 * after), a direct cluster endpoint token, a virtual cluster's kube config.
 */
export const SECRET_POINTERS: readonly string[] = [
  '/spec/data',
  '/spec/key',
  '/status/token',
  '/status/kubeConfig',
];

type Json = unknown;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A secret field's value, redacted: maps keep their keys, null (a deletion in a patch) stays null. */
function redactValue(value: Json, wholeMap: boolean): Json {
  if (value === null || value === undefined) return value;
  if (wholeMap && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = v === null ? null : REDACTED_VALUE;
    return out;
  }
  if (typeof value === 'string' && value === '') return value;
  return REDACTED_VALUE;
}

function redactSection(section: unknown, fields: Record<string, boolean>): unknown {
  if (!isRecord(section)) return section;
  let out: Record<string, unknown> | undefined;
  for (const [field, wholeMap] of Object.entries(fields)) {
    if (!(field in section)) continue;
    out ??= { ...section };
    out[field] = redactValue(section[field], wholeMap);
  }
  return out ?? section;
}

function redactList(items: unknown): unknown {
  return Array.isArray(items) ? items.map((item) => redactObject(item)) : items;
}

/**
 * A copy of `obj` with every secret value redacted, in the object itself, in the
 * items of a list (and of an owner's `accessKeys`), in a watch event's `object` and
 * in a Table's row objects. Parts without secrets are shared, not copied.
 */
export function redactObject(obj: Json): Json {
  if (Array.isArray(obj)) return obj.map((item) => redactObject(item));
  if (!isRecord(obj)) return obj;
  const out: Record<string, unknown> = { ...obj };
  if ('spec' in obj) out['spec'] = redactSection(obj['spec'], { data: true, key: false });
  if ('status' in obj) out['status'] = redactSection(obj['status'], { token: false, kubeConfig: false });
  if ('items' in obj) out['items'] = redactList(obj['items']);
  if ('accessKeys' in obj) out['accessKeys'] = redactList(obj['accessKeys']);
  if ('object' in obj) out['object'] = redactObject(obj['object']);
  if (Array.isArray(obj['rows'])) {
    out['rows'] = obj['rows'].map((row) =>
      isRecord(row) && 'object' in row ? { ...row, object: redactObject(row['object']) } : row,
    );
  }
  return out;
}

/** RFC 6901 tokens of a pointer ('' is the whole document). */
function pointerTokens(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/');
}

/**
 * A JSON patch's operation value: redacted whole when the operation targets a
 * secret field or something inside one; when it targets a parent of one (`/spec`,
 * the whole object), the value is redacted as that part of an object.
 */
function redactOperationValue(path: string, value: Json): Json {
  for (const secret of SECRET_POINTERS) {
    if (path === secret || path.startsWith(`${secret}/`)) {
      // A whole data map keeps its keys; one entry, or a key or token, is one value.
      return path === '/spec/data' ? redactValue(value, true) : redactValue(value, false);
    }
  }
  const tokens = pointerTokens(path);
  // Rebuild the object around the value so the object rules apply to it.
  let wrapped: Json = value;
  for (let i = tokens.length - 1; i >= 0; i--) wrapped = { [tokens[i] ?? '']: wrapped };
  let redacted = redactObject(wrapped);
  for (const token of tokens) redacted = isRecord(redacted) ? redacted[token] : redacted;
  return redacted;
}

/**
 * A patch body as an audit event records it, redacted. Merge, strategic merge and
 * apply patches have the object's shape; a JSON patch is a list of operations, each
 * value redacted by the path it writes. Anything else (a body that is not a JSON
 * object or list) is not recorded: undefined.
 */
export function redactPatch(patchType: string, patch: Json): Json {
  if (patchType === 'json') {
    if (!Array.isArray(patch)) return undefined;
    return patch.map((op) => {
      if (!isRecord(op) || !('value' in op)) return op;
      const path = op['path'];
      return {
        ...op,
        value: typeof path === 'string' ? redactOperationValue(path, op['value']) : REDACTED_VALUE,
      };
    });
  }
  return isRecord(patch) ? redactObject(patch) : undefined;
}

/** The object without metadata.managedFields (and its list items without theirs), for omitManagedFields. */
export function withoutManagedFields(obj: Json): Json {
  if (!isRecord(obj)) return obj;
  let out = obj;
  const metadata = obj['metadata'];
  if (isRecord(metadata) && 'managedFields' in metadata) {
    const { managedFields: _dropped, ...rest } = metadata;
    out = { ...obj, metadata: rest };
  }
  if (Array.isArray(obj['items'])) out = { ...out, items: obj['items'].map(withoutManagedFields) };
  if (Array.isArray(obj['rows'])) {
    out = {
      ...out,
      rows: obj['rows'].map((row) =>
        isRecord(row) && 'object' in row ? { ...row, object: withoutManagedFields(row['object']) } : row,
      ),
    };
  }
  return out;
}
