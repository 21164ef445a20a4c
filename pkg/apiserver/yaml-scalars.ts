// YAML scalars as kube-apiserver reads them: the Go value goyaml.v2 resolves a scalar
// to, and what sigs.k8s.io/yaml's YAMLToJSON writes of it, as a map key or as a value.
//
// kube-apiserver 1.32 reads a YAML body with sigs.k8s.io/yaml v1.4's YAMLToJSON, on its
// goyaml.v2 fork (the same code as gopkg.in/yaml.v2 2.4.0): goyaml.v2 unmarshals the
// document into interface{} values, resolving each plain scalar by YAML 1.1's rules
// (resolve.go `resolve`: `yes`/`off` are bools, `0777` octal, `1_000` an integer), and
// a tagged one by its tag (`!!str 12` a string, `!!float 1` a float, `!!binary` the
// decoded bytes); a quoted or block scalar without a tag is a string. A scalar that
// looks like a timestamp is decoded into interface{} as its text (decode.go `scalar`).
// `convertToJSONableObject` (yaml.go) then turns every map key into a string by its Go
// type: a string stays itself, an int is written in decimal (`strconv.Itoa`, so its
// exact digits, however far past 2^53), a float64 with `strconv.FormatFloat(f, 'g',
// -1, 32)` (the shortest digits of its float32 rounding; ±Inf and NaN as `.inf`,
// `-.inf`, `.nan`), a bool as `true` or `false`. Any other type (uint64 for integers
// between 2^63 and 2^64, nil for a null key) fails the whole body with `unsupported map
// key of type: ...`. Values are left as they are and written by encoding/json, which
// writes a float64 in the shortest form that reads back the same (as JavaScript does)
// and refuses ±Inf and NaN (`json: unsupported value: +Inf`).
//
// Our YAML library reads YAML 1.2; the body decoder parses with its failsafe schema (all
// scalars strings) and asks this module for each scalar's Go value from its source text.

import { isUtf8 } from 'node:buffer';

import type { Scalar } from 'yaml';

/** A scalar as goyaml.v2 resolves it into interface{} (`int` stands for Go's int and int64). */
export type GoScalar =
  | { readonly type: 'string'; readonly text: string }
  | { readonly type: 'int' | 'uint64'; readonly value: bigint }
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
 * strconv.ParseFloat's reading of a scalar starting with '.' (resolve's '.' hint):
 * decimal digits and an optional exponent, with Go's underscores (each between two
 * digits, as `.5_0`). Undefined for a syntax error.
 */
function parseDotFloat(text: string): number | undefined {
  if (!/^\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?$/.test(text)) return undefined;
  return parseGoFloat(text.replace(/_/g, ''));
}

/**
 * A plain scalar's Go value as goyaml.v2's `resolve` finds it, in resolve's order (v1.4's
 * fork: no *big.Int, so an integer past uint64 that is no yamlStyleFloat, in hex, octal or
 * binary, stays a string). `text` is the scalar's source, trimmed.
 */
export function resolvePlain(text: string): GoScalar {
  const looked = BY_LOOKUP.get(text);
  if (looked) return looked;
  const first = text.charCodeAt(0);
  if (first === 0x2e) {
    // resolve's '.' hint: strconv.ParseFloat of the text as it is (".5", ".5e3").
    const f = parseDotFloat(text);
    return f === undefined ? { type: 'string', text } : { type: 'float64', value: f };
  }
  // resolve's hints: only a digit or a sign may start a number.
  const digit = first >= 0x30 && first <= 0x39;
  if (!digit && first !== 0x2b && first !== 0x2d) return { type: 'string', text };
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
  return { type: 'string', text };
}

/** A positive float's shortest decimal: its significant digits (no trailing zeros) and the exponent of the first. */
interface ShortestDigits {
  readonly digits: string;
  readonly exponent: number;
}

/** A double's shortest round-trip digits: what JavaScript's own number formatting finds. */
function shortestFloat64(abs: number): ShortestDigits {
  const [mantissa = '0', exponent = '0'] = abs.toExponential().split('e');
  return { digits: mantissa.replace('.', '').replace(/0+$/, '') || '0', exponent: Number(exponent) };
}

const float32Bits = new DataView(new ArrayBuffer(4));

/**
 * A float32's shortest digits as Go's strconv finds them (ftoaryu.go `ryuFtoaShortest`):
 * of the decimals inside the float's rounding interval (halfway to each neighbour,
 * the bounds admitted only when the binary mantissa is even), those with the fewest
 * digits, and of these the nearest to the exact value, an exact tie going to the even
 * last digit. Computed exactly in integers (the value is mant·2^exp, the bounds a quarter
 * ulp apart at a power of two's border, else half an ulp). Trying digit counts through
 * toExponential and Math.fround instead rounds twice (decimal to double to float32) and
 * rounds ties up, which gave another string for about one float32 key in a thousand.
 */
function shortestFloat32(abs: number): ShortestDigits {
  float32Bits.setFloat32(0, abs);
  const bits = float32Bits.getUint32(0);
  const biased = (bits >>> 23) & 0xff;
  const fraction = bits & 0x7fffff;
  const mant = BigInt(biased === 0 ? fraction : fraction | 0x800000);
  const exp = (biased === 0 ? 1 : biased) - 150;
  // The value and its bounds in units of 2^(exp-2): the lower neighbour is nearer at the
  // bottom of a binade (but not for subnormals, whose spacing is even).
  const border = fraction === 0 && biased > 1;
  const center = mant * 4n;
  const lower = center - (border ? 1n : 2n);
  const upper = center + 2n;
  const inclusive = mant % 2n === 0n;
  // A decimal m·10^k compares with X·2^(exp-2) as m·10^k·2^(2-exp) with X (or scaled the other way).
  const shift = BigInt(Math.abs(exp - 2));
  const scaleBinary = (x: bigint): bigint => (exp - 2 >= 0 ? x << shift : x);
  const unitOf = (k: number): { num: bigint; den: bigint } => {
    // 10^k in units of 2^(exp-2): num/den.
    const ten = 10n ** BigInt(Math.abs(k));
    const binary = exp - 2 >= 0 ? 1n : 1n << shift;
    return k >= 0 ? { num: ten * binary, den: 1n } : { num: binary, den: ten };
  };
  // 10^kMax exceeds the upper bound: start there and lower k while no multiple of 10^k fits.
  let k = Math.floor(Math.log10(abs)) + 2;
  for (;;) {
    const { num, den } = unitOf(k);
    // Multiples m with lower ≤ m·num/den ≤ upper, i.e. lower·den ≤ m·num ≤ upper·den.
    const lo = scaleBinary(lower) * den;
    const hi = scaleBinary(upper) * den;
    let first = lo / num + (lo % num === 0n ? 0n : 1n);
    if (!inclusive && first * num === lo) first++;
    let last = hi / num;
    if (!inclusive && last * num === hi) last--;
    if (first <= last) {
      const c = scaleBinary(center) * den;
      let m = c / num;
      const rest = c - m * num;
      if (rest * 2n > num || (rest * 2n === num && m % 2n === 1n)) m++;
      if (m < first) m = first;
      if (m > last) m = last;
      const text = m.toString();
      return { digits: text.replace(/0+$/, '') || '0', exponent: k + text.length - 1 };
    }
    k--;
  }
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
  const { digits, exponent: exp } = bits === 32 ? shortestFloat32(abs) : shortestFloat64(abs);
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

/** A resolved scalar as `%+#v` prints it (uint64 in hex). */
export function goSyntax(v: GoScalar): string {
  switch (v.type) {
    case 'string':
      return JSON.stringify(v.text);
    case 'int':
      return v.value.toString();
    case 'uint64':
      return `0x${v.value.toString(16)}`;
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

const TAG_PREFIX = 'tag:yaml.org,2002:';

/** The tags goyaml.v2's `resolvableTag` accepts, by their short name. */
const RESOLVABLE_TAGS = new Set(['str', 'bool', 'int', 'float', 'null', 'timestamp']);

/** The Go type name goyaml.v2's `shortTag` gives a resolved scalar in its messages. */
function shortTagOf(v: GoScalar): string {
  switch (v.type) {
    case 'string':
      return '!!str';
    case 'int':
    case 'uint64':
      return '!!int';
    case 'float64':
      return '!!float';
    case 'bool':
      return '!!bool';
    case 'nil':
      return '!!null';
  }
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * goyaml.v2's `parseTimestamp`: `YYYY-M-D`, optionally followed by a time (`T`, `t` or
 * a space, then `h:m:s` with optional fraction; a zone, `Z` or `±hh:mm`, after T/t only),
 * as time.Parse reads its four layouts (one- or two-digit fields, a real calendar date).
 */
function isGoTimestamp(text: string): boolean {
  const m =
    /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2}))|(?: ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?))?$/.exec(
      text,
    );
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && !leap ? 28 : (DAYS_IN_MONTH[month - 1] ?? 0);
  if (month < 1 || day < 1 || day > days) return false;
  const hour = Number(m[4] ?? m[7] ?? 0);
  const minute = Number(m[5] ?? m[8] ?? 0);
  const second = Number(m[6] ?? m[9] ?? 0);
  return hour < 24 && minute < 60 && second < 60;
}

/** Go's base64.StdEncoding: padded, `\r` and `\n` ignored, nothing else outside the alphabet. */
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Bytes as a JavaScript string the way encoding/json writes a Go string: valid UTF-8 as
 * it is, each byte of an invalid sequence as U+FFFD (where TextDecoder would replace a
 * truncated sequence with one U+FFFD).
 */
function goStringOfBytes(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] ?? 0;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const piece = n === 0 ? undefined : bytes.subarray(i, i + n);
    if (piece && piece.length === n && isUtf8(piece)) {
      out += piece.toString('utf8');
      i += n;
    } else {
      out += '\ufffd';
      i++;
    }
  }
  return out;
}

/** A tagged scalar's Go value, or the error goyaml.v2 fails the body with. */
export type GoTagged = GoScalar | { readonly type: 'error'; readonly message: string };

/**
 * A tagged scalar as goyaml.v2 decodes it into interface{} (decode.go `scalar`, resolve.go
 * `resolve`): `!!str` and other tags it cannot resolve give the text; `!!binary` the
 * base64-decoded bytes; `!!bool`, `!!int`, `!!float`, `!!null` and `!!timestamp` resolve
 * the text as a plain scalar, which must come out of that type (an int becomes a float for
 * `!!float`). Upstream's mismatch message quotes the scalar; ours leaves it out, as no
 * message here carries a value (a Global Secret's data is secret).
 */
export function resolveTagged(tag: string, text: string): GoTagged {
  const short = tag.startsWith(TAG_PREFIX) ? tag.slice(TAG_PREFIX.length) : undefined;
  if (short === 'binary') {
    const base64 = text.replace(/[\r\n]/g, '');
    if (!STD_BASE64.test(base64)) return { type: 'error', message: 'yaml: !!binary value contains invalid base64 data' };
    return { type: 'string', text: goStringOfBytes(Buffer.from(base64, 'base64')) };
  }
  if (short === undefined || short === 'str' || !RESOLVABLE_TAGS.has(short)) return { type: 'string', text };
  if (short === 'timestamp') {
    if (isGoTimestamp(text)) return { type: 'string', text };
    return { type: 'error', message: `yaml: cannot decode ${shortTagOf(resolvePlain(text))} as a !!timestamp` };
  }
  // A timestamp-looking text is only read as one untagged or under !!timestamp.
  const resolved = resolvePlain(text);
  if (shortTagOf(resolved) === `!!${short}`) return resolved;
  if (short === 'float' && resolved.type === 'int') return { type: 'float64', value: Number(resolved.value) };
  return { type: 'error', message: `yaml: cannot decode ${shortTagOf(resolved)} as a !!${short}` };
}

/**
 * A scalar node's Go value as goyaml.v2 decodes it: a plain untagged scalar resolved by
 * YAML 1.1's rules, a tagged one by its tag. Undefined for an untagged quoted or block
 * scalar, a string the YAML library already holds as such.
 */
export function goScalarOfNode(node: Scalar): GoTagged | undefined {
  const text = node.source ?? String(node.value);
  if (node.tag !== undefined) return resolveTagged(node.tag, node.type === 'PLAIN' ? text.trim() : text);
  if (node.type !== 'PLAIN') return undefined;
  return resolvePlain(text.trim());
}

/** The JSON value encoding/json writes of a resolved value: a JavaScript value, or its error. */
export type GoJSONValue = { readonly value: unknown } | { readonly error: string };

/**
 * What a value resolved by goyaml.v2 becomes through json.Marshal and back: ints as
 * numbers (the caller checks that a double holds them), floats as they are (encoding/json
 * writes a float64's shortest round-trip digits, so JSON.parse reads back the same
 * double), and ±Inf and NaN refused as encoding/json refuses them.
 */
export function goJSONValue(v: GoScalar): GoJSONValue {
  switch (v.type) {
    case 'string':
      return { value: v.text };
    case 'int':
    case 'uint64':
      return { value: Number(v.value) };
    case 'float64':
      if (Number.isFinite(v.value)) return { value: v.value };
      return { error: `json: unsupported value: ${formatGoFloat(v.value, 64)}` };
    case 'bool':
      return { value: v.value };
    case 'nil':
      return { value: null };
  }
}
