// Values as structured-merge-diff sees them (sigs.k8s.io/structured-merge-diff/v4
// value/): plain JSON values, with integers and floats told apart, a total order
// across kinds (float and int by number, then int, string, bool, list, map, null),
// and the two text forms smd writes: Go's %q-style ToString for paths in messages,
// and encoding/json's escaping (HTML-safe) for `v:` and `k:` keys in FieldsV1.

/** A JSON value as decoded from a request body or from storage. */
export type Value = null | boolean | number | string | readonly Value[] | { readonly [key: string]: Value };

export type ValueMap = { readonly [key: string]: Value };

export function isMap(v: Value | undefined): v is ValueMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isList(v: Value | undefined): v is readonly Value[] {
  return Array.isArray(v);
}

/** Integers are smd's ints; other numbers its floats (JSON carries no other distinction). */
function isInt(v: Value): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

function isFloat(v: Value): v is number {
  return typeof v === 'number' && !Number.isInteger(v);
}

export function isScalar(v: Value): boolean {
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean';
}

/** Go's strings.Compare: byte order of the UTF-8 encodings, not UTF-16 code units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Code-point order equals UTF-8 byte order; UTF-16 order differs only above U+FFFF.
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next();
    const cb = ib.next();
    if (ca.done) return cb.done ? 0 : -1;
    if (cb.done) return 1;
    const pa = ca.value.codePointAt(0) ?? 0;
    const pb = cb.value.codePointAt(0) ?? 0;
    if (pa !== pb) return pa < pb ? -1 : 1;
  }
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function compareLists(a: readonly Value[], b: readonly Value[]): number {
  for (let i = 0; ; i++) {
    if (i >= a.length && i >= b.length) return 0;
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    const c = compareValues(a[i] as Value, b[i] as Value);
    if (c !== 0) return c;
  }
}

function sortedKeys(m: ValueMap): string[] {
  return Object.keys(m).sort(compareStrings);
}

function compareMaps(a: ValueMap, b: ValueMap): number {
  const ka = sortedKeys(a);
  const kb = sortedKeys(b);
  for (let i = 0; ; i++) {
    if (i >= ka.length && i >= kb.length) return 0;
    if (i >= ka.length) return -1;
    if (i >= kb.length) return 1;
    const c = compareStrings(ka[i] as string, kb[i] as string);
    if (c !== 0) return c;
    const v = compareValues(a[ka[i] as string] as Value, b[kb[i] as string] as Value);
    if (v !== 0) return v;
  }
}

/** smd's total order of values (value.Compare). */
export function compareValues(a: Value, b: Value): number {
  if (isFloat(a)) return typeof b === 'number' ? sign(a - b) : -1;
  if (isFloat(b)) return typeof a === 'number' ? sign(a - b) : 1;
  if (isInt(a)) return isInt(b) ? sign(a - b) : -1;
  if (isInt(b)) return 1;
  if (typeof a === 'string') return typeof b === 'string' ? compareStrings(a, b) : -1;
  if (typeof b === 'string') return 1;
  if (typeof a === 'boolean') return typeof b === 'boolean' ? (a === b ? 0 : a ? 1 : -1) : -1;
  if (typeof b === 'boolean') return 1;
  if (isList(a)) return isList(b) ? compareLists(a, b) : -1;
  if (isList(b)) return 1;
  if (isMap(a)) return isMap(b) ? compareMaps(a, b) : -1;
  if (isMap(b)) return 1;
  return 0;
}

/** smd's value.Equals: numbers by value (an int equals the same float), maps by content. */
export function equalValues(a: Value, b: Value): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  if (isList(a) || isList(b)) {
    if (!isList(a) || !isList(b) || a.length !== b.length) return false;
    return a.every((v, i) => equalValues(v, b[i] as Value));
  }
  if (isMap(a) || isMap(b)) {
    if (!isMap(a) || !isMap(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && equalValues(a[k] as Value, b[k] as Value));
  }
  return a === b;
}

/** Go's strconv.Quote, for the printable text smd puts in paths (`[=\"a\"]`). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp >= 0x80 && cp < 0xa0) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Go's %v of a float64: shortest form, exponent outside [-4, 21). */
function goFloat(n: number): string {
  if (n === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21) {
    const [m, e] = n.toExponential().split('e') as [string, string];
    const ev = Number(e);
    return `${m}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`;
  }
  return String(n);
}

/** smd's value.ToString: the form values take in path strings and conflict messages. */
export function valueToString(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return isInt(v) ? String(v) : goFloat(v);
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'boolean') return String(v);
  if (isList(v)) return '[' + v.map(valueToString).join(',') + ']';
  return sortedKeys(v)
    .map((k) => `${k}=${valueToString(v[k] as Value)}`)
    .join('');
}

/** encoding/json's string escaping: HTML-safe (<, >, & as \u003c...), U+2028/9 escaped. */
export function goJSONString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || ch === '<' || ch === '>' || ch === '&' || cp === 0x2028 || cp === 0x2029)
      out += '\\u' + cp.toString(16).padStart(4, '0');
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else out += ch;
  }
  return out + '"';
}

/** A value encoded as encoding/json (and jsoniter's compatible mode) writes it: sorted map keys. */
export function goJSON(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goJSONString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (isList(v)) return '[' + v.map(goJSON).join(',') + ']';
  return (
    '{' +
    sortedKeys(v)
      .map((k) => `${goJSONString(k)}:${goJSON(v[k] as Value)}`)
      .join(',') +
    '}'
  );
}
