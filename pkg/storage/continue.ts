// List continue tokens in the exact wire format of k8s.io/apiserver storage/continue.go:
// base64 RawURL (no padding) of the JSON {"v":"meta.k8s.io/v1","rv":N,"start":"<key
// relative to the list prefix>"}. Clients treat the token as opaque, but other
// replicas (and the upstream e2e tests) decode it, so the bytes must match Go's
// encoding/json output and decoding must reject what upstream rejects.

import { invalidContinue, StorageError } from './errors.js';

const TOKEN_VERSION = 'meta.k8s.io/v1';

const INVALID = 'continue key is not valid';
const INVALID_START_RV = `${INVALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`;
const EMPTY_START_KEY = `${INVALID}: encoded start key empty (version meta.k8s.io/v1)`;
const UNRECOGNIZED_VERSION = `${INVALID}: server does not recognize this encoded version`;

/** The BadRequest text the registry returns for any undecodable token. */
function fail(detail: string): never {
  throw invalidContinue(`invalid continue token: ${detail}`);
}

/**
 * Go's json.Marshal escapes the HTML-significant characters and the JavaScript line
 * separators that JSON.stringify leaves alone; everything else is encoded alike.
 */
function goJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Returns the continue token that starts a list at `key` (a full key under `keyPrefix`). */
export function encodeContinue(key: string, keyPrefix: string, resourceVersion: number): string {
  if (!key.startsWith(keyPrefix) || key === keyPrefix) {
    throw new Error('unable to encode next field: the key and key prefix do not match');
  }
  const start = key.slice(keyPrefix.length);
  const json = `{"v":${goJsonString(TOKEN_VERSION)},"rv":${resourceVersion},"start":${goJsonString(start)}}`;
  return Buffer.from(json, 'utf8').toString('base64url');
}

export interface DecodedContinue {
  /** The full key to resume from (inclusive). */
  readonly key: string;
  /** The revision the list is pinned to; -1 means "continue at the latest revision". */
  readonly resourceVersion: number;
}

const BASE64_URL = /^[A-Za-z0-9_-]*$/;

/** base64.RawURLEncoding.DecodeString: strict alphabet, no padding, no stray characters. */
function decodeRawUrl(s: string): Buffer {
  if (!BASE64_URL.test(s)) {
    const bad = [...s].findIndex((c) => !/[A-Za-z0-9_-]/.test(c));
    fail(`${INVALID}: illegal base64 data at input byte ${bad}`);
  }
  if (s.length % 4 === 1) fail(`${INVALID}: illegal base64 data at input byte ${s.length - 1}`);
  return Buffer.from(s, 'base64url');
}

function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** Mirrors encoding/json's complaint when a field has the wrong type. */
function fieldTypeError(field: string, value: unknown, goType: string): never {
  const shown = typeof value === 'number' ? `number ${value}` : goJsonType(value);
  fail(
    `${INVALID}: json: cannot unmarshal ${shown} into Go struct field continueToken.${field} of type ${goType}`,
  );
}

/**
 * Parses the token's JSON. The two commonest failures get encoding/json's wording;
 * other syntax errors keep the JavaScript parser's (clients only look at the 400).
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const first = text.trimStart()[0];
    if (first === undefined || /end of JSON input/i.test(String(err)))
      fail(`${INVALID}: unexpected end of JSON input`);
    if (!/[{["\-0-9tfn]/.test(first))
      fail(`${INVALID}: invalid character '${first}' looking for beginning of value`);
    fail(`${INVALID}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** path.Clean from Go, for rooted paths: collapses slashes, "." and ".." elements. */
export function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/**
 * Decodes a continue token for a list under `keyPrefix`. Throws an InvalidContinue
 * StorageError whose message is the full client-facing text (`invalid continue token: ...`).
 */
export function decodeContinue(token: string, keyPrefix: string): DecodedContinue {
  const raw = decodeRawUrl(token);
  const parsed = parseJson(raw.toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    // A JSON null decodes into the zero token upstream, which then fails the version check.
    if (parsed === null) fail(`${UNRECOGNIZED_VERSION} `);
    fail(
      `${INVALID}: json: cannot unmarshal ${goJsonType(parsed)} into Go value of type storage.continueToken`,
    );
  }
  const fields = parsed as Record<string, unknown>;
  const v = fields['v'] ?? '';
  const rv = fields['rv'] ?? 0;
  const start = fields['start'] ?? '';
  if (typeof v !== 'string') fieldTypeError('v', v, 'string');
  if (typeof rv !== 'number' || !Number.isInteger(rv)) fieldTypeError('rv', rv, 'int64');
  if (typeof start !== 'string') fieldTypeError('start', start, 'string');

  if (v !== TOKEN_VERSION) fail(`${UNRECOGNIZED_VERSION} ${v}`);
  if (rv === 0) fail(INVALID_START_RV);
  if (start === '') fail(EMPTY_START_KEY);
  // Defend against path traversal: a start key that path.Clean would change could
  // range over keys outside keyPrefix once appended to it.
  const rooted = start.startsWith('/') ? start : `/${start}`;
  const cleaned = cleanPath(rooted);
  if (cleaned !== rooted) fail(`${INVALID}: ${start}`);
  return { key: keyPrefix + cleaned.slice(1), resourceVersion: rv };
}

/**
 * Where a continued list resumes: the token's start key, and the revision its first
 * page was read at (0: the token says "latest", rv -1). A continue token carries its
 * own revision, so one given beside it (other than "" or "0") is refused, as upstream.
 */
export function continuePoint(
  token: string,
  keyPrefix: string,
  resourceVersion: string,
): { key: string; revision: number } {
  const decoded = decodeContinue(token, keyPrefix);
  if (resourceVersion !== '' && resourceVersion !== '0') {
    throw new StorageError(
      'InvalidError',
      '',
      'specifying resource version is not allowed when using continue',
    );
  }
  return { key: decoded.key, revision: Math.max(0, decoded.resourceVersion) };
}
