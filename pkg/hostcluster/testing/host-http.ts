// The host double's HTTP plumbing: reading a JSON body under kube-apiserver's size
// limit, writing JSON, and writing a StatusError as a Kubernetes Status.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { StatusError } from './host-errors.js';

/** kube-apiserver's limit on a request body (3 MiB). */
const MAX_BODY = 3 * 1024 * 1024;

export function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) throw new StatusError(413, 'RequestEntityTooLarge', 'the request is too large');
    chunks.push(b);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new StatusError(400, 'BadRequest', 'the request body is not JSON');
  }
}

export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function writeStatus(res: ServerResponse, err: StatusError): void {
  writeJson(res, err.code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: err.reason,
    ...(err.details ? { details: err.details } : {}),
    code: err.code,
  });
}
