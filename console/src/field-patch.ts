// A save that conflicts only with what the user changed: a JSON Patch (RFC 6902,
// `application/json-patch+json`) that first tests each changed field's value as the
// page showed it, then replaces, adds or removes it. A write to a field the user did
// not touch (the server's own `status.lastActivity` of a key in use, every minute)
// moves the resourceVersion but fails no test, so it no longer turns the save into a
// 409; a concurrent change of the same field fails its test, and the save is refused
// whole (RFC 6902: the patch applies atomically or not at all).
//
// RFC 6902 cannot test that a member is absent (fast-json-patch, which the server
// uses, fails a `test` of `null` against a missing member), and a parent cannot stand
// in for it (the server keeps fields it never shows, such as an access key's hash in
// `spec.key`, so a test of `/spec` as shown never passes): a field that was not set
// is guarded by the object's `/metadata/resourceVersion`. When only that moved (the
// edited fields are as the page showed them), refusalOf says so ('beside') and the
// caller makes the patch again from the object as it is now, as client-go's
// RetryOnConflict does: a change elsewhere does not refuse the save in the end, and a
// change of the field itself is never overwritten.
// Every patch also tests `/metadata/uid`, so that it never applies to another object
// created under the same name meanwhile.
// Knows nothing of the DOM or of fetch, so that it is tested on its own.

export type FieldPath = readonly string[];

export interface FieldChange {
  /** Where the field is, e.g. ['spec', 'description']. */
  readonly path: FieldPath;
  /** What the user set; undefined or null removes the field. */
  readonly value: unknown;
  /** What the page calls the field ("Description"), for a conflict's message. */
  readonly label: string;
  /**
   * false: set it whatever it holds now, with no test (a switch such as "Disable",
   * whose meaning does not depend on what it was). Default: guarded.
   */
  readonly guard?: boolean;
  /** A secret value: a conflict's message names the field, never its value. */
  readonly secret?: boolean;
  /**
   * '' is a value here, not an empty form field: setting '' where nothing was set, or
   * removing a member that holds '', is a change (a Global Secret's key may hold '').
   */
  readonly exact?: boolean;
}

export type JsonPatchOperation =
  | { readonly op: 'test' | 'add' | 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** RFC 6901: `~` and `/` escaped in each token. */
export function pointer(path: FieldPath): string {
  return path.map((token) => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path`, or undefined when a member on the way is absent. */
export function valueAt(object: unknown, path: FieldPath): unknown {
  let at: unknown = object;
  for (const token of path) {
    if (Array.isArray(at)) at = at[Number(token)];
    else if (isRecord(at)) at = Object.prototype.hasOwnProperty.call(at, token) ? at[token] : undefined;
    else return undefined;
  }
  return at;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

/** Not set, null, '' and [] are one thing to a form: an empty field. */
function isEmpty(value: unknown): boolean {
  return (
    value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

/** Whether saving `value` would change what `original` holds at `path`. */
function changes(original: unknown, change: FieldChange): boolean {
  const before = valueAt(original, change.path);
  if (!change.exact && isEmpty(before) && isEmpty(change.value)) return false;
  return !deepEqual(before, change.value ?? undefined);
}

const RESOURCE_VERSION: FieldPath = ['metadata', 'resourceVersion'];

/** What a change's test reads: the field itself, or the object's version when the field was not set. */
function guardOf(object: unknown, path: FieldPath): FieldPath | undefined {
  if (valueAt(object, path) !== undefined) return path;
  return valueAt(object, RESOURCE_VERSION) !== undefined ? RESOURCE_VERSION : undefined;
}

/** How many members of `path` `object` holds, never counting the last one (where `add` may put a value). */
function existingDepth(object: unknown, path: FieldPath): number {
  let n = path.length - 1;
  while (n > 0 && valueAt(object, path.slice(0, n)) === undefined) n--;
  return n;
}

/** The fields of `changes` that differ from `original`: only these are saved. */
export function changedFields(original: unknown, edits: readonly FieldChange[]): FieldChange[] {
  return edits.filter((c) => changes(original, c));
}

/**
 * The JSON Patch that saves `edits` over `original` (the object as the page showed it):
 * the uid's and each changed field's test first, then the changes. Empty when nothing
 * changed (the caller then sends nothing).
 */
export function guardedPatch(original: unknown, edits: readonly FieldChange[]): JsonPatchOperation[] {
  const changed = changedFields(original, edits);
  if (changed.length === 0) return [];
  const tests: JsonPatchOperation[] = [];
  const tested = new Set<string>();
  const test = (path: FieldPath) => {
    const at = pointer(path);
    if (tested.has(at)) return;
    tested.add(at);
    tests.push({ op: 'test', path: at, value: valueAt(original, path) });
  };
  const uid = valueAt(original, ['metadata', 'uid']);
  if (typeof uid === 'string' && uid) test(['metadata', 'uid']);
  const writes: JsonPatchOperation[] = [];
  for (const change of changed) {
    if (change.guard === false) {
      // RFC 6902's add replaces a member that exists; the parent is always there for these switches.
      const remove = change.value === undefined || change.value === null;
      if (remove) throw new Error(`an unguarded change cannot remove ${pointer(change.path)}`);
      writes.push({ op: 'add', path: pointer(change.path), value: change.value });
      continue;
    }
    const guard = guardOf(original, change.path);
    if (guard) test(guard);
    const before = valueAt(original, change.path);
    const remove = change.value === undefined || change.value === null;
    if (remove) {
      if (before !== undefined) writes.push({ op: 'remove', path: pointer(change.path) });
    } else if (before !== undefined) {
      writes.push({ op: 'replace', path: pointer(change.path), value: change.value });
    } else {
      // `add` needs the parent: add the missing part of the path as one nested value.
      const at = existingDepth(original, change.path) + 1;
      let value: unknown = change.value;
      for (let i = change.path.length - 1; i >= at; i--) value = { [change.path[i] ?? '']: value };
      writes.push({ op: 'add', path: pointer(change.path.slice(0, at)), value });
    }
  }
  return [...tests, ...writes];
}

/** Why a guarded save was refused, read from the object as the server now holds it. */
export type Refusal =
  /** Another object now has the name (deleted and created again). */
  | { readonly kind: 'replaced' }
  /** Fields the user edited were changed meanwhile: a real conflict. */
  | { readonly kind: 'changed'; readonly fields: readonly FieldChange[] }
  /**
   * Only the version of an object whose edited field was not set moved (a change
   * elsewhere): the edited fields are as the page showed them, so the save may be
   * made again from `current` without overwriting anybody's change.
   */
  | { readonly kind: 'beside' }
  /** No test fails against `current`: the refusal had another cause (validation). */
  | { readonly kind: 'none' };

/**
 * Which tests of the patch `guardedPatch(base, edits)` fail against `current`, the
 * edited fields judged against `original` (what the page showed; `base` is the
 * version a save made again started from).
 */
export function refusalOf(
  original: unknown,
  current: unknown,
  edits: readonly FieldChange[],
  base: unknown = original,
): Refusal {
  const uid = valueAt(original, ['metadata', 'uid']);
  if (uid !== undefined && valueAt(current, ['metadata', 'uid']) !== uid) return { kind: 'replaced' };
  const changed = changedFields(original, edits).filter((change) => change.guard !== false);
  const moved = (path: FieldPath | undefined) =>
    path !== undefined && !deepEqual(valueAt(original, path), valueAt(current, path));
  const fields = changed.filter((change) => moved(change.path));
  if (fields.length) return { kind: 'changed', fields };
  const versionGuarded = changed.some((change) => guardOf(base, change.path) === RESOURCE_VERSION);
  const versionMoved = valueAt(base, RESOURCE_VERSION) !== valueAt(current, RESOURCE_VERSION);
  return versionGuarded && versionMoved ? { kind: 'beside' } : { kind: 'none' };
}

/** A field's value for a message: "not set", a quoted string, a list, or its JSON. */
export function describeValue(value: unknown): string {
  if (isEmpty(value)) return 'not set';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  if (Array.isArray(value) && value.every((v) => isRecord(v) && typeof v['name'] === 'string'))
    return value.map((v) => String((v as { name: string }).name)).join(', ');
  return JSON.stringify(value);
}
