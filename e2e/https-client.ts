// A raw HTTPS client for the tests that need to send what kubectl never would
// (malformed JSON, YAML bombs, oversized bodies) or read the wire exactly (status
// codes, Status bodies, watch frames). It trusts only the server's CA from the
// admin kube config, so TLS is verified like a real client verifies it.

import { request } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

export interface ApiResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON; throws with the body text when it is not JSON. */
  json<T = unknown>(): T;
}

export interface HttpsTarget {
  /** Base URL every path is appended to, e.g. `https://127.0.0.1:4443/kubernetes/management`. */
  readonly baseUrl: string;
  /** PEM CA bundle. */
  readonly ca: string;
  /** Bearer token; omitted when empty. */
  readonly token: string;
}

export type RequestBody = string | Buffer | Record<string, unknown> | readonly unknown[];

function encodeBody(body: RequestBody | undefined, headers: Record<string, string>): Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['Content-Type'] = 'application/json';
  return Buffer.from(JSON.stringify(body));
}

function toResponse(res: IncomingMessage, text: string): ApiResponse {
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    text,
    json<T>(): T {
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new Error(`response (${res.statusCode}) is not JSON: ${text.slice(0, 500)}`);
      }
    },
  };
}

/**
 * Sends one request and reads the whole response. The server may answer (413)
 * and close before the body is fully written; that is a response, not an error.
 */
export function apiRequest(
  target: HttpsTarget,
  method: string,
  path: string,
  body?: RequestBody,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<ApiResponse> {
  const h: Record<string, string> = { Accept: 'application/json', ...headers };
  if (target.token && !Object.keys(h).some((k) => k.toLowerCase() === 'authorization')) {
    h['Authorization'] = `Bearer ${target.token}`;
  }
  const payload = encodeBody(body, h);
  if (payload) h['Content-Length'] = String(payload.length);
  const url = new URL(target.baseUrl + path);
  return new Promise<ApiResponse>((resolve, reject) => {
    let settled = false;
    const req = request(
      url,
      { method, headers: h, ca: target.ca, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          settled = true;
          resolve(toResponse(res, Buffer.concat(chunks).toString('utf8')));
        });
        res.on('error', (e) => {
          if (!settled) {
            settled = true;
            reject(e);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no response within ${timeoutMs}ms`)));
    req.on('error', (e) => {
      // An EPIPE/ECONNRESET while still writing a body the server refused is
      // expected; the response handler above then delivers the answer, if any.
      setImmediate(() => {
        if (!settled) {
          settled = true;
          reject(e);
        }
      });
    });
    if (payload) req.end(payload);
    else req.end();
  });
}

/**
 * Hands each non-empty line of a streamed response to `onLine` as it arrives (a watch
 * sends one event a line), until `onLine` returns false. `rest()` is what came after
 * the last newline.
 */
export function readLines(res: IncomingMessage, onLine: (line: string) => boolean): { rest(): string } {
  let buffered = '';
  let reading = true;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while (reading && (nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== '') reading = onLine(line);
    }
  });
  return { rest: () => buffered };
}

export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

/** An open watch stream, read line by line as client-node reads it. */
export interface RawWatch {
  readonly status: number;
  readonly contentType: string;
  readonly events: WatchEvent[];
  /** Lines that were not one JSON event each (must stay empty). */
  readonly badLines: string[];
  /** Resolves when the server ends the stream (true) or the connection breaks (false). */
  readonly ended: Promise<boolean>;
  close(): void;
}

export function openWatch(
  target: HttpsTarget,
  path: string,
  timeoutMs = 30_000,
  extraHeaders: Record<string, string> = {},
): Promise<RawWatch> {
  const url = new URL(target.baseUrl + path);
  const headers: Record<string, string> = { Accept: 'application/json', ...extraHeaders };
  if (target.token) headers['Authorization'] = `Bearer ${target.token}`;
  return new Promise<RawWatch>((resolve, reject) => {
    const req = request(url, { method: 'GET', headers, ca: target.ca, agent: false }, (res) => {
      clearTimeout(timer);
      const events: WatchEvent[] = [];
      const badLines: string[] = [];
      const lines = readLines(res, (line) => {
        try {
          events.push(JSON.parse(line) as WatchEvent);
        } catch {
          badLines.push(line);
        }
        return true;
      });
      const ended = new Promise<boolean>((done) => {
        res.on('end', () => {
          if (lines.rest().trim() !== '') badLines.push(lines.rest());
          done(true);
        });
        res.on('error', () => done(false));
        res.on('aborted', () => done(false));
      });
      resolve({
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'] ?? '',
        events,
        badLines,
        ended,
        close: () => req.destroy(),
      });
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`watch ${path}: no response headers within ${timeoutMs}ms`)),
      timeoutMs,
    );
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end();
  });
}
