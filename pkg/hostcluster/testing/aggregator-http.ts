// The aggregator double's HTTP plumbing: header helpers and the bodies it writes
// (JSON, a Kubernetes Status, and Go's http.Error text/plain).

import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function appendHeader(headers: OutgoingHttpHeaders, name: string, value: string): void {
  const existing = headers[name];
  if (existing === undefined) headers[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else headers[name] = [String(existing), value];
}

export function writeBody(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function writeJSON(res: ServerResponse, status: number, obj: unknown): void {
  writeBody(res, status, 'application/json', JSON.stringify(obj));
}

/** Go's http.Error: text/plain, nosniff. */
export function writePlain(res: ServerResponse, status: number, text: string): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  writeBody(res, status, 'text/plain; charset=utf-8', text);
}

export function writeStatus(
  res: ServerResponse,
  code: number,
  reason: string,
  message: string,
  details?: Record<string, unknown>,
): void {
  writeJSON(res, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  });
}
