// Reading and decoding request bodies. The size limit is enforced while reading (and
// up front from Content-Length), so an oversized body is never held in memory: as
// kube-apiserver, more than the limit is a 413 `Request entity too large: limit is N`.
// Decoding refuses what kube-apiserver's decoders refuse, with a 400 and nothing
// stored: nesting deeper than a fixed limit, integers outside int64, YAML anchors
// whose value contains their own alias, and excessive alias expansion ("billion
// laughs"). Duplicate keys are collected for fieldValidation (Strict refuses them,
// Warn warns), in sigs.k8s.io/json's words for JSON and sigs.k8s.io/yaml's for YAML.
// A YAML scalar becomes what kube-apiserver's YAMLToJSON makes of it (yaml-scalars.ts):
// plain scalars are read by YAML 1.1's rules (`yes` is true, `0777` is 511, `1_000` is
// 1000), tagged ones by their tag, a map key is written as Go writes its type (an integer
// key keeps its digits, however large, so the checks on integers below are for values
// only), and a value of ±Inf or NaN is refused as encoding/json refuses it. Merge keys
// (`<<`) are decoded as goyaml.v2 decodes them (yaml-merge.ts), a collection key is
// refused in its words (yaml-invalid-key.ts), and an alias key is its anchor's scalar.

// One refusal is ours alone. kube-apiserver keeps every int64 exact; objects here are
// JavaScript values, whose numbers are doubles, so an integer past ±2^53 would come
// back changed, silently: rounded (9007199254740993 -> 9007199254740992) or, when a
// double holds it, written in its shortest form (2^62 -> 4611686018427388000). A body
// that carries one is refused (400) instead: every integer we accept comes back as
// sent. Bodies whose numbers are only read (DeleteOptions) skip that check.

import type { IncomingMessage } from 'node:http';
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseAllDocuments,
  Scalar,
  type Document,
  type Node as YamlNode,
} from 'yaml';

import { newBadRequest, newRequestEntityTooLarge, type ApiError } from '../apis/meta/errors.js';
import { MAX_NESTING_DEPTH, nestsDeeperThan } from '../registry/generic/object.js';
import { changedByDouble, outsideInt64, scanJSON } from './json-scan.js';
import { AnchorIndex } from './yaml-anchors.js';
import { invalidMapKey } from './yaml-invalid-key.js';
import { MergeExpander } from './yaml-merge.js';
import { goJSONValue, goScalarOfNode, goSyntax, goYAMLMapKey, type GoScalar } from './yaml-scalars.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';
import { YAMLDepthError, YAMLValueBuilder } from './yaml-value.js';
import type { BodyFormat } from './negotiation.js';

export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * The 400 for a body nested past MAX_NESTING_DEPTH (the registry's bound), in
 * apimachinery's words; without the number when the YAML parser's own recursion gave
 * out first (flow collections, some hundreds of levels).
 */
function newTooDeep(limitKnown = true): ApiError {
  const limit = limitKnown ? ` of ${MAX_NESTING_DEPTH}` : '';
  return newBadRequest(`the request body is nested too deeply: exceeded max depth${limit}`);
}

/**
 * Reads the whole body, at most `limit` bytes. Rejects with a 413 ApiError as soon as
 * the limit is passed and stops reading (the caller closes the connection).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      req.pause();
      reject(newRequestEntityTooLarge(`limit is ${limit}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: unknown, body?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(body ?? Buffer.alloc(0));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        chunks.length = 0;
        finish(newRequestEntityTooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void =>
      finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    const onError = (err: Error): void => finish(err);
    // 'close' before 'end' means the client went away mid-body.
    const onClose = (): void => finish(new Error('client closed the connection while sending the body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

export interface DecodedBody {
  readonly value: unknown;
  /**
   * Duplicate keys, one message each as fieldValidation=Warn sends them: JSON
   * `duplicate field "metadata.name"`, YAML `line 3: key "a" already set in map`.
   */
  readonly duplicates: readonly string[];
  /** The duplicates as one strict decoding error, for fieldValidation=Strict. */
  readonly strictError: string;
}

/**
 * Words an error YAMLToJSON returns (yaml-to-json-error.ts) as the 400's message, the
 * way the calling verb's upstream handler does.
 */
export type YAMLErrorWording = (error: string) => string;

/**
 * The wording where no upstream handler words it (a DeleteOptions body): goyaml.v2's
 * errors as they are, the conversion's after sigs.k8s.io/yaml's own prefix.
 */
const plainYAMLError: YAMLErrorWording = (error) =>
  error.startsWith('yaml: ') ? error : `error converting YAML to JSON: ${error}`;

/** handlers/patch.go's wording for an apply patch: sigs.k8s.io/yaml's Unmarshal, then the handler's prefix. */
export const applyPatchYAMLError: YAMLErrorWording = (error) =>
  `error decoding YAML: error converting YAML to JSON: ${error}`;

/** Bytes of the body upstream's summary shows (handlers/rest.go `summarizeData(body, 30)`). */
const SUMMARY_BYTES = 30;

/**
 * The envelope lines a summary may show, whole: `apiVersion:` or `kind:` and a word of
 * the characters group/version/kind names use (nothing after it, not even a comment,
 * which could hold anything).
 */
const ENVELOPE_LINE = /^(?:apiVersion|kind):[ \t]*[A-Za-z0-9./-]*[ \t]*$/;
/** The same fields in a flow map, quoted or not, one per comma-separated part. */
const ENVELOPE_FLOW_PART = /^\s*"?(?:apiVersion|kind)"?\s*:\s*"?[A-Za-z0-9./-]*"?\s*\}?\s*$/;
/** The last part cut before its colon: what is there of `apiVersion` or `kind` (a flow one perhaps quoted). */
const CUT_KEY = /^(\s*"?)([A-Za-z]*)("?\s*)$/;

/**
 * Whether `part` is an envelope line (or flow part), or, being the last part of the
 * summary's bytes, the start of one cut short (a cut value still matches `whole`).
 */
function isEnvelope(part: string, whole: RegExp, last: boolean): boolean {
  if (whole.test(part)) return true;
  if (!last) return false;
  const cut = CUT_KEY.exec(part);
  if (!cut) return false;
  const [, before = '', name = '', after = ''] = cut;
  // A YAML line starts at its key, unquoted.
  if (whole === ENVELOPE_LINE && (before !== '' || after !== '')) return false;
  if (name === '') return after === '';
  return after === '' ? 'apiVersion'.startsWith(name) || 'kind'.startsWith(name) : name === 'apiVersion' || name === 'kind';
}

/**
 * handlers/rest.go `summarizeData(body, 30)`: the body's first 30 bytes, as text when it
 * starts with `{` (Go's string of the bytes: UTF-8, a character cut at the end shown as
 * U+FFFD once the Status is encoded), else in hex, then ` ...` when there is more.
 * Upstream shows whatever those bytes are; here they are shown only while every line (or
 * flow part) of them is an `apiVersion` or `kind` field with a plain name (as most bodies
 * begin), the last one perhaps cut short, since anything else may be a Global Secret's
 * data and no message carries a value. Otherwise the summary says it is not shown.
 */
export function summarizeYAMLBody(raw: Buffer): string {
  if (raw.length === 0) return '<empty>';
  const head = raw.subarray(0, SUMMARY_BYTES);
  const more = raw.length > SUMMARY_BYTES ? ' ...' : '';
  const text = head.toString('utf8');
  const flow = text.startsWith('{');
  const parts = flow ? text.slice(1).split(',') : text.split('\n');
  const shown = parts.every((part, i) => isEnvelope(part, flow ? ENVELOPE_FLOW_PART : ENVELOPE_LINE, i === parts.length - 1));
  if (!shown) return '<not shown: may hold secret values>';
  return flow ? `${text}${more}` : `${head.toString('hex')}${more}`;
}

/** handlers/rest.go `transformDecodeError` for a create or update whose YAML body YAMLToJSON refused. */
export function objectYAMLError(kind: string, raw: Buffer): YAMLErrorWording {
  return (error) => `the object provided is unrecognized (must be of type ${kind}): ${error} (${summarizeYAMLBody(raw)})`;
}

/**
 * Decodes a body in the given format. Empty or malformed bodies are 400s, and so
 * are integers a double would round unless `exact` is false (see the header). What
 * YAMLToJSON itself refuses is worded by `wording` (the verb's upstream words).
 */
export function decodeBody(
  raw: Buffer,
  format: BodyFormat,
  exact = true,
  wording: YAMLErrorWording = plainYAMLError,
): DecodedBody {
  if (format === 'json') return decodeJSON(raw, exact);
  return decodeYAML(raw.toString('utf8'), exact, wording);
}

/**
 * The 400 for an integer literal no int64 holds, as encoding/json words an overflow,
 * without the literal: this check reads every number of a body before its kind's
 * schema does, so the literal may be a Global Secret's value (upstream would judge
 * such a value by its string field's type, whose message quotes nothing).
 */
function outOfInt64(path: string, format: 'json' | 'yaml'): ApiError {
  const where = path === '' ? '' : ` (field ${path})`;
  return newBadRequest(`${format}: cannot unmarshal number into Go value of type int64${where}`);
}

/** The 400 for an integer literal that a double would change (see the header); without it, as above. */
function inexactInteger(path: string, format: 'json' | 'yaml'): ApiError {
  const where = path === '' ? '' : ` (field ${path})`;
  return newBadRequest(
    `${format}: cannot keep a number${where} exactly: this server holds integers beyond ` +
      `±9007199254740992 as 64-bit floats, which would change it`,
  );
}

export function decodeJSON(raw: Buffer, exact = true): DecodedBody {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw newBadRequest('the request body is empty');
  // Depth first: the scan stops at the limit, while JSON.parse would build (slowly) whatever nests.
  const scan = scanJSON(text, MAX_NESTING_DEPTH, exact);
  if (scan.tooDeep) throw newTooDeep();
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    // V8's message names the offending token and position, nothing more.
    const detail = err instanceof Error ? err.message : 'invalid JSON';
    throw newBadRequest(`the request body is not valid JSON: ${detail}`);
  }
  const big = scan.outOfRange[0];
  if (big) throw outOfInt64(big.path, 'json');
  const rounded = scan.inexact[0];
  if (rounded) throw inexactInteger(rounded.path, 'json');
  const duplicates = scan.duplicates.map((path) => `duplicate field ${JSON.stringify(path)}`);
  return { value, duplicates, strictError: duplicates.join(', ') };
}

/**
 * Whether YAML text certainly nests past MAX_NESTING_DEPTH, decided before the yaml
 * library builds anything: a million `[` make its parser run for minutes and then
 * exhaust the heap. Flow collections are counted on the lexer's tokens (quotes,
 * comments and block scalars are the lexer's business), stopping at the limit; block
 * collections nest by indentation, or by indicators on one line (`- - - x`), so a
 * line's indentation plus its leading indicators bounds how deep it sits.
 */
function yamlNestsTooDeep(text: string): boolean {
  for (const line of text.split('\n')) {
    const m = /^( *)((?:[-?:](?: +|$))*)/.exec(line);
    const indicators = m?.[2]?.replace(/ /g, '').length ?? 0;
    if ((m?.[1]?.length ?? 0) + indicators > MAX_NESTING_DEPTH) return true;
  }
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > MAX_NESTING_DEPTH) return true;
    } else if (token === ']' || token === '}') {
      depth--;
    }
  }
  return false;
}

/**
 * A single YAML document whose top level is a map. What YAMLToJSON itself refuses
 * (goyaml.v2's errors, a key or value it cannot convert) is worded by `wording`.
 */
export function decodeYAML(text: string, exact = true, wording: YAMLErrorWording = plainYAMLError): DecodedBody {
  try {
    return decodeYAMLDocument(text, exact);
  } catch (err) {
    if (err instanceof YAMLToJSONError) throw newBadRequest(wording(err.message));
    throw err;
  }
}

function decodeYAMLDocument(text: string, exact: boolean): DecodedBody {
  if (yamlNestsTooDeep(text)) throw newTooDeep();
  const lineCounter = new LineCounter();
  // Duplicate keys are found by walking the tree below, so the parser must not reject them.
  // The failsafe schema leaves every scalar a string: its Go value is resolved in the walk (yaml-scalars.ts).
  const docs = parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: false,
    schema: 'failsafe',
    resolveKnownTags: false,
    // The library reports through process.emitWarning otherwise (a collection key, an
    // unknown tag): one warning per request would flood the server's log. What it
    // would warn about is refused or handled in the walk below.
    logLevel: 'error',
  });
  if (!Array.isArray(docs)) throw newBadRequest('the request body is empty');
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  if (nonEmpty.length === 0) throw newBadRequest('the request body is empty');
  if (nonEmpty.length > 1) throw newBadRequest('the request body must be a single YAML document');
  const doc = nonEmpty[0];
  if (!doc) throw newBadRequest('the request body is empty');
  const first = doc.errors[0];
  // The parser's own recursion gives up on extreme nesting: that is our depth limit too.
  if (first?.message.includes('Maximum call stack size exceeded')) throw newTooDeep(false);
  if (first) {
    const pos = first.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : '';
    throw newBadRequest(`the request body is not valid YAML: ${where}${firstLine(first.message)}`);
  }
  if (!isMap(doc.contents)) throw newBadRequest('the request body must be a YAML map (an object)');
  // Every alias resolved once, in document order (yaml-anchors.ts); merges kept beside the tree (yaml-merge.ts).
  const anchors = new AnchorIndex(doc);
  const merges = new MergeExpander(anchors);
  const duplicates = checkYAMLTree(doc, anchors, merges, lineCounter, exact);
  let value: unknown;
  try {
    value = new YAMLValueBuilder(anchors, merges).build(doc.contents);
  } catch (err) {
    // Nesting past the limit through aliases or merges, or a stack the build still
    // exhausted: the request's fault, answered as the body's depth limit is.
    if (err instanceof YAMLDepthError || err instanceof RangeError) throw newTooDeep(err instanceof YAMLDepthError);
    if (err instanceof YAMLToJSONError || !(err instanceof ReferenceError)) throw err;
    throw newBadRequest(`the request body is not valid YAML: ${err.message}`);
  }
  // Aliases may nest one anchor's value inside another's, deeper than the text shows.
  if (nestsDeeperThan(value)) throw newTooDeep();
  return { value, duplicates, strictError: `yaml: unmarshal errors:\n  ${duplicates.join('\n  ')}` };
}

function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return (nl < 0 ? message : message.slice(0, nl)).replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * A map key's Go value as goyaml.v2 holds it (typed: the int 1 and the string "1" are
 * two keys): nil for an absent key, a scalar's resolved value (a quoted one is the
 * string the YAML library holds). An alias key is its anchor's value, which for a
 * scalar is that scalar's Go value (`&n 12` makes `*n` the int 12).
 */
function goKeyOf(key: Scalar | null): GoScalar {
  if (key === null) return { type: 'nil' };
  const go = goScalarOfNode(key);
  if (go === undefined) return { type: 'string', text: String(key.value) };
  if (go.type === 'error') throw new YAMLToJSONError(go.message);
  return go;
}

/**
 * One iterative walk of the parsed tree (no input can exhaust the stack): refuses
 * nesting past MAX_NESTING_DEPTH, an anchor whose value contains its own alias (which
 * would decode to a circular object), and integers outside int64; returns the
 * duplicate keys, as `line 3: key "a" already set in map`.
 */
function checkYAMLTree(
  doc: Document,
  anchors: AnchorIndex,
  merges: MergeExpander,
  lines: LineCounter,
  exact: boolean,
): string[] {
  // Each duplicate at its place in goyaml.v2's decoding order (`order`, then `rank` among
  // one merge's entries), with the offset of the line it names.
  const duplicates: { order: number; rank: number; offset: number; message: string }[] = [];
  // Collections on the path from the root to the node being visited: an alias to one of them is a cycle.
  const open = new Set<YamlNode>();
  interface Frame {
    readonly node: YamlNode;
    readonly children: readonly (YamlNode | null)[];
    next: number;
  }
  const frames: Frame[] = [];
  // Refused after the walk, in upstream's order: goyaml.v2's own errors (a tag the text
  // does not fit) fail the walk at once; then a key YAMLToJSON cannot convert, a value
  // encoding/json cannot write (±Inf, NaN), and last what the JSON decoder refuses (an
  // integer outside int64, or one a double would change).
  let unsupportedKey: YAMLToJSONError | undefined;
  let unsupportedValue: YAMLToJSONError | undefined;
  let integerError: ApiError | undefined;
  const visit = (node: YamlNode | null): void => {
    if (isAlias(node)) {
      const target = anchors.target(node);
      if (target && open.has(target))
        throw new YAMLToJSONError(`yaml: anchor '${node.source}' value contains itself`);
      return;
    }
    if (isScalar(node)) {
      // A value (keys are read below, with their map): its Go value as JSON sees it.
      const go = goScalarOfNode(node);
      if (go === undefined) return; // a quoted or block string, as the YAML library holds it
      if (go.type === 'error') throw new YAMLToJSONError(go.message);
      if (go.type === 'string' && node.value === go.text) return; // most values: a word as parsed
      if (go.type === 'int' || go.type === 'uint64') {
        if (outsideInt64(go.value)) integerError ??= outOfInt64('', 'yaml');
        else if (exact && changedByDouble(go.value)) integerError ??= inexactInteger('', 'yaml');
      }
      const json = goJSONValue(go);
      // json.Marshal runs once the whole document is converted: key errors come first.
      if ('error' in json) unsupportedValue ??= new YAMLToJSONError(json.error);
      else if (!Object.is(node.value, json.value)) node.value = json.value;
      return;
    }
    const children: (YamlNode | null)[] = [];
    if (isMap(node)) {
      // Merge keys first: their entries are set at the `<<` as if written there (yaml-merge.ts).
      merges.expand(node, open);
      // An inline map merged into this one is decoded straight into it: its own duplicates
      // are this map's, found among the merged entries, not twice.
      const inlineSource = merges.isInlineSource(node);
      // Keys as goyaml.v2 holds them (typed: the int 1 and the string "1" are two keys).
      const seen = new Set<string>();
      for (const pair of merges.entriesOf(node)) {
        let key = pair.key as YamlNode | null;
        const value = pair.value as YamlNode | null;
        if (merges.isMergeEntry(pair)) {
          // It sets nothing itself; what it names is checked like any node.
          children.push(value);
          continue;
        }
        const merged = merges.mergedAt(pair);
        // An alias key is its anchor's value: a scalar's Go value, or a collection (refused).
        const target = isAlias(key) ? anchors.target(key) : key;
        if (isAlias(key) && target && open.has(target))
          throw new YAMLToJSONError(`yaml: anchor '${key.source}' value contains itself`);
        // goyaml.v2 decodes a collection key, then refuses it at once (decode.go `mapping`).
        if (target !== null && target !== undefined && !isScalar(target)) throw invalidMapKey(target, anchors);
        const goKey = goKeyOf(target ?? null);
        // Most keys are strings: their identity is their text, and `%#v` is made for a duplicate only.
        const identity = goKey.type === 'string' ? `s${goKey.text}` : `${goKey.type} ${goSyntax(goKey)}`;
        if (seen.has(identity) && !inlineSource) {
          // goyaml.v2 names the line of the value set again; it sets a merged entry at its `<<`.
          const line = value?.range?.[0] ?? key?.range?.[0] ?? 0;
          const keyOffset = key?.range?.[0] ?? 0;
          duplicates.push({
            order: merged?.offset ?? keyOffset,
            rank: merged?.rank ?? 0,
            offset: line,
            message: `key ${goSyntax(goKey)} already set in map`,
          });
        }
        seen.add(identity);
        // The JSON key upstream makes of it (yaml-scalars.ts): its exact digits past 2^53,
        // YAML 1.1's words for bools, or a 400 (a null key, one in uint64's range).
        // Written into the node, which the value builder (yaml-value.ts) reads; an alias key becomes a scalar of its own.
        const json = goYAMLMapKey(goKey);
        if ('unsupported' in json) {
          unsupportedKey ??= new YAMLToJSONError(json.unsupported);
        } else if (isAlias(key)) {
          key = new Scalar(json.key);
          pair.key = key;
        } else if (isScalar(key) && key.value !== json.key) {
          key.value = json.key;
        }
        // A merged entry's nodes are checked where they are written.
        if (merged === undefined) children.push(value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) {
        if (isPair(item)) children.push(item.key as YamlNode | null, item.value as YamlNode | null);
        else children.push(item as YamlNode | null);
      }
    } else {
      return;
    }
    if (frames.length >= MAX_NESTING_DEPTH) throw newTooDeep();
    open.add(node);
    frames.push({ node, children, next: 0 });
  };
  visit(doc.contents as YamlNode | null);
  for (;;) {
    const top = frames[frames.length - 1];
    if (!top) break;
    if (top.next >= top.children.length) {
      open.delete(top.node);
      frames.pop();
      continue;
    }
    visit(top.children[top.next++] ?? null);
  }
  const refused = unsupportedKey ?? unsupportedValue ?? integerError;
  if (refused) throw refused;
  // In document order, as go-yaml reports them.
  return duplicates
    .sort((a, b) => a.order - b.order || a.rank - b.rank)
    .map((d) => `line ${lines.linePos(d.offset).line}: ${d.message}`);
}
