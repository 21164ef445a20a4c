// The JSON object key kube-apiserver makes of a plain (unquoted, untagged) YAML map key.
//
// kube-apiserver reads a YAML body with sigs.k8s.io/yaml's YAMLToJSON (v1.4, on its
// goyaml.v2 fork): goyaml.v2 unmarshals the document into interface{} values, resolving
// each plain scalar by YAML 1.1's rules (goyaml.v2 resolve.go `resolve`), and
// `convertToJSONableObject` (yaml.go) then turns every map key into a string by its Go
// type: a string stays itself, an int is written in decimal (`strconv.Itoa`, so its
// exact digits, however far past 2^53), a float64 with `strconv.FormatFloat(f, 'g',
// -1, 32)` (the shortest digits of its float32 rounding; ±Inf and NaN as `.inf`,
// `-.inf`, `.nan`), a bool as `true` or `false`. Any other type (uint64 for integers
// between 2^63 and 2^64, *big.Int past that in hex, octal or binary, nil for a null
// key) fails the whole body with `unsupported map key of type: ...`.
//
// Our YAML library reads YAML 1.2 and would hand back a number (rounded past 2^53) or
// the key's text, so the body decoder asks this module for the key from the key's own
// source text instead. Only keys: values keep the decoder's YAML 1.2 reading.

import { isScalar, type Node as YamlNode } from 'yaml';

/** A plain scalar as goyaml.v2 resolves it into interface{} (the types a key can take). */
export type GoScalar =
  | { readonly type: 'string'; readonly text: string }
  | { readonly type: 'int' | 'uint64' | '*big.Int'; readonly value: bigint }
  | { readonly type: 'float64'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'nil' };

/** A resolved key: the JSON key upstream writes, or the message of the 400 it fails with. */
export type GoYAMLKey = { readonly key: string } | { readonly unsupported: string };

/** goyaml.v2's resolve table: the plain scalars it resolves by lookup (bools, nulls, special floats). */
const BY_LOOKUP = new Map<string, GoScalar>();
for (const [words, scalar] of [
  ['y Y yes Yes YES true True TRUE on On ON', { type: 'bool', value: true }],
  ['n N no No NO false False FALSE off Off OFF', { type: 'bool', value: false }],
  [' ~ null Null NULL', { type: 'nil' }],
  ['.nan .NaN .NAN', { type: 'float64', value: NaN }],
  ['.inf .Inf .INF +.inf +.Inf +.INF', { type: 'float64', value: Infinity }],
  ['-.inf -.Inf -.INF', { type: 'float64', value: -Infinity }],
] as const) {
  for (const w of words.split(' ')) BY_LOOKUP.set(w, scalar);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** goyaml.v2's `yamlStyleFloat`: the decimal floats it tries once integers failed. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/**
 * strconv.ParseInt/ParseUint with base 0 (Go 1.13+): an optional sign, then `0x`, `0o`,
 * `0b` (either case) or a leading `0` (octal), or decimal digits. The magnitude, or
 * undefined for a syntax error. Underscores are already gone (resolve strips them).
 */
function parseGoInteger(text: string): { signed: boolean; value: bigint } | undefined {
  const m = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (!m) return undefined;
  const body = m[2] ?? '0';
  // BigInt reads 0x/0o/0b itself; a bare leading 0 means octal in Go.
  const magnitude = /^0[0-7]+$/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body.toLowerCase());
  return { signed: m[1] !== '', value: m[1] === '-' ? -magnitude : magnitude };
}

/** strconv.ParseFloat's result, or undefined where Go reports ErrRange (overflow to ±Inf; underflow is 0 without error). */
function parseGoFloat(text: string): number | undefined {
  const f = Number(text);
  return Number.isFinite(f) ? f : undefined;
}

/**
 * A plain scalar's Go value as goyaml.v2's `resolve` finds it (the fork's, with its
 * *big.Int last resort), in resolve's order. `text` is the scalar's source, trimmed.
 */
export function resolvePlain(text: string): GoScalar {
  const looked = BY_LOOKUP.get(text);
  if (looked) return looked;
  const first = text[0] ?? '';
  if (first === '.') {
    // resolve's '.' hint: strconv.ParseFloat of the text as it is (".5", ".5e3").
    const f = /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? parseGoFloat(text) : undefined;
    return f === undefined ? { type: 'string', text } : { type: 'float64', value: f };
  }
  if (!/^[-+0-9]$/.test(first)) return { type: 'string', text };
  // Timestamps (YYYY-...) resolve to time.Time, which decoding into interface{} keeps as
  // its text; none of them parses as a number, so falling through gives the same text.
  const plain = text.replace(/_/g, '');
  const int = parseGoInteger(plain);
  if (int && int.value >= INT64_MIN && int.value <= INT64_MAX) return { type: 'int', value: int.value };
  // ParseUint takes no sign at all.
  const unsigned = int !== undefined && !int.signed;
  if (unsigned && int.value <= UINT64_MAX) return { type: 'uint64', value: int.value };
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = parseGoFloat(plain);
    if (f !== undefined) return { type: 'float64', value: f };
  }
  // Past ParseUint's range and not a yamlStyleFloat (so hex, octal or binary): *big.Int.
  if (unsigned) return { type: '*big.Int', value: int.value };
  return { type: 'string', text };
}

/**
 * strconv.FormatFloat(f, 'g', -1, bits): the fewest digits that read back as the same
 * float32 (bits 32) or float64, in %e form when the decimal exponent is below -4 or at
 * least 6 (Go's threshold for the shortest form), else in %f form.
 */
export function formatGoFloat(f: number, bits: 32 | 64): string {
  const v = bits === 32 ? Math.fround(f) : f;
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  const abs = Math.abs(v);
  if (abs === 0) return `${sign}0`;
  // toExponential() gives a double's shortest digits; a float32 needs the fewest that fround back.
  let shortest = abs.toExponential();
  for (let precision = 1; bits === 32 && precision <= 9; precision++) {
    const e = abs.toExponential(precision - 1);
    if (Math.fround(Number(e)) === abs) {
      shortest = e;
      break;
    }
  }
  const [mantissa = '0', exponent = '0'] = shortest.split('e');
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0] ?? '0'}${tail}e${exp < 0 ? '-' : '+'}${e}`;
  }
  const point = exp + 1; // digits before the decimal point
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A resolved scalar as `%+#v` prints it (uint64 in hex, a *big.Int with its sign). */
export function goSyntax(v: GoScalar): string {
  switch (v.type) {
    case 'string':
      return JSON.stringify(v.text);
    case 'int':
      return v.value.toString();
    case 'uint64':
      return `0x${v.value.toString(16)}`;
    case '*big.Int':
      // big.Int's Format honours the '+' flag.
      return `+${v.value.toString()}`;
    case 'float64':
      return formatGoFloat(v.value, 64);
    case 'bool':
      return String(v.value);
    case 'nil':
      return '<nil>';
  }
}

/**
 * The key convertToJSONableObject makes of a resolved key, or the error it fails the
 * body with. Upstream's message ends with `, value: %+#v` of the entry's value; ours
 * stops before it, as no error message here carries a value (a Global Secret's data
 * is secret).
 */
export function goYAMLMapKey(key: GoScalar): GoYAMLKey {
  switch (key.type) {
    case 'string':
      return { key: key.text };
    case 'int':
      return { key: key.value.toString() };
    case 'float64': {
      const s = formatGoFloat(key.value, 32);
      return { key: s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s };
    }
    case 'bool':
      return { key: String(key.value) };
    default: {
      // reflect.TypeOf(nil) is a nil Type, which %s prints as below.
      const type = key.type === 'nil' ? '%!s(<nil>)' : key.type;
      return { unsupported: `unsupported map key of type: ${type}, key: ${goSyntax(key)}` };
    }
  }
}

/**
 * A map key node's Go value, when upstream resolves it by goyaml.v2's rules: an absent
 * or plain, untagged scalar key. Undefined for the rest (quoted or tagged scalars,
 * collections, aliases), which the YAML library reads as upstream does.
 */
export function goKeyOfNode(key: YamlNode | null): GoScalar | undefined {
  if (key === null) return { type: 'nil' };
  if (!isScalar(key) || key.type !== 'PLAIN' || key.tag !== undefined) return undefined;
  return resolvePlain((key.source ?? String(key.value)).trim());
}
