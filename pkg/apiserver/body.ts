// Reading and decoding request bodies. The size limit is enforced while reading (and
// up front from Content-Length), so an oversized body is never held in memory: as
// kube-apiserver, more than the limit is a 413 `Request entity too large: limit is N`.
// YAML goes through the `yaml` package with alias expansion bounded (a "billion
// laughs" document is a 400, not an out-of-memory) and duplicate keys collected for
// fieldValidation, the way sigs.k8s.io/yaml's strict mode reports them.

import type { IncomingMessage } from 'node:http';
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';

import { newBadRequest, newRequestEntityTooLarge } from '../apis/meta/errors.js';
import type { BodyFormat } from './negotiation.js';

export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Aliases a YAML document may expand before we call it an attack. Real manifests use a handful. */
const MAX_YAML_ALIAS_COUNT = 100;

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
  /** Duplicate keys, as `line 3: key "a" already set in map` (YAML only). */
  readonly duplicates: readonly string[];
}

/** Decodes a body in the given format. Empty or malformed bodies are 400s. */
export function decodeBody(raw: Buffer, format: BodyFormat): DecodedBody {
  if (format === 'json') return { value: decodeJSON(raw), duplicates: [] };
  return decodeYAML(raw.toString('utf8'));
}

export function decodeJSON(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw newBadRequest('the request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    // V8's message names the offending token and position, nothing more.
    const detail = err instanceof Error ? err.message : 'invalid JSON';
    throw newBadRequest(`the request body is not valid JSON: ${detail}`);
  }
}

/** A single YAML document whose top level is a map. */
export function decodeYAML(text: string): DecodedBody {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by walking the tree below, so the parser must not reject them.
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: false });
  if (!Array.isArray(docs)) throw newBadRequest('the request body is empty');
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  if (nonEmpty.length === 0) throw newBadRequest('the request body is empty');
  if (nonEmpty.length > 1) throw newBadRequest('the request body must be a single YAML document');
  const doc = nonEmpty[0];
  if (!doc) throw newBadRequest('the request body is empty');
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : '';
    throw newBadRequest(`the request body is not valid YAML: ${where}${firstLine(first.message)}`);
  }
  if (!isMap(doc.contents)) throw newBadRequest('the request body must be a YAML map (an object)');
  const duplicates: string[] = [];
  collectDuplicates(doc.contents, lineCounter, duplicates);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (err) {
    const detail = err instanceof Error ? err.message : 'cannot be decoded';
    throw newBadRequest(`the request body is not valid YAML: ${detail}`);
  }
  return { value, duplicates };
}

function firstLine(message: string): string {
  const nl = message.indexOf('\n');
  return (nl < 0 ? message : message.slice(0, nl)).replace(/ at line \d+, column \d+:?$/, '');
}

function collectDuplicates(node: YamlNode | null | undefined, lines: LineCounter, out: string[]): void {
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key = pair.key;
      const name = isScalar(key) ? String(key.value) : undefined;
      if (name !== undefined) {
        if (seen.has(name)) {
          const offset = isScalar(key) && key.range ? key.range[0] : 0;
          out.push(`line ${lines.linePos(offset).line}: key ${JSON.stringify(name)} already set in map`);
        }
        seen.add(name);
      }
      collectDuplicates(pair.value as YamlNode | null, lines, out);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) collectDuplicates(item as YamlNode | null, lines, out);
  }
}
