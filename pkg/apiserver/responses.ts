// Writing responses: objects and Status errors in the negotiated encoding, with the
// headers every API response carries. Nothing here throws: a failure after the
// headers went out can only be reported by cutting the connection.

import type { ServerResponse } from 'node:http';
import { stringify as yamlStringify } from 'yaml';

import { isApiError, toApiError, type ApiError } from '../apis/meta/errors.js';
import { cachedItemBody, cachedListBody, type EncodedBody } from '../registry/generic/encoded.js';
import type { Logger } from '../util/log/index.js';
import { JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, type MediaType } from './negotiation.js';

export interface OutputFormat {
  readonly mediaType: MediaType;
  readonly pretty: boolean;
  /** Content-Type to send when it carries more than the media type (discovery v2). */
  readonly contentType?: string;
}

export const JSON_FORMAT: OutputFormat = { mediaType: JSON_MEDIA_TYPE, pretty: false };

/** Serializes like the Kubernetes encoders: one document, newline-terminated. */
export function encode(obj: unknown, format: OutputFormat): string {
  if (format.mediaType === YAML_MEDIA_TYPE) {
    // YAML 1.1 quoting keeps strings like "yes" or "2024-01-01" strings for Go readers.
    return yamlStringify(obj, { version: '1.1' });
  }
  if (format.pretty) return `${JSON.stringify(obj, null, 2)}\n`;
  return `${JSON.stringify(obj)}\n`;
}

export function writeObject(res: ServerResponse, code: number, obj: unknown, format: OutputFormat): void {
  // Objects (and lists of them) served from the watch cache are encoded once per state.
  const cached = format.mediaType === JSON_MEDIA_TYPE && !format.pretty ? cachedBody(obj) : undefined;
  if (cached) {
    writeParts(res, code, format, cached);
    return;
  }
  const body = encode(obj, format);
  res.writeHead(code, {
    'Content-Type': format.contentType ?? format.mediaType,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** An object, or a list, served from the watch cache: its JSON as memoized Buffers. */
function cachedBody(obj: unknown): EncodedBody | undefined {
  return cachedItemBody(obj) ?? cachedListBody(obj);
}

const NEWLINE = Buffer.from('\n');

/**
 * A body of memoized Buffers, written as they are under one cork: the socket gets them
 * as one writev, with the headers, and nothing is joined, encoded or copied in
 * JavaScript (a list of 10,000 items is ~20,000 pieces of one ~11 MB body). The same
 * bytes and Content-Length as the one string JSON.stringify would give.
 */
function writeParts(res: ServerResponse, code: number, format: OutputFormat, body: EncodedBody): void {
  res.writeHead(code, {
    'Content-Type': format.contentType ?? format.mediaType,
    'Content-Length': body.bytes + 1,
  });
  res.cork(); // end() uncorks
  for (const part of body.parts) res.write(part);
  res.end(NEWLINE);
}

/** Bytes already serialized (cached discovery and OpenAPI documents). */
export function writeBytes(
  res: ServerResponse,
  code: number,
  contentType: string,
  body: Buffer | string,
  headers?: Record<string, string>,
): void {
  res.writeHead(code, {
    ...headers,
    'Content-Type': contentType,
    'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
  });
  res.end(body);
}

export function writePlainText(res: ServerResponse, code: number, text: string): void {
  writeBytes(res, code, 'text/plain; charset=utf-8', text);
}

/** http.NotFound's body, for paths that are not part of the API at all. */
export function writeNotFoundPage(res: ServerResponse): void {
  writePlainText(res, 404, '404 page not found\n');
}

/**
 * Writes an error as a Status. Errors that are not ApiErrors are logged and become a
 * 500 without detail. Once headers are out, the connection is destroyed instead.
 */
export function writeError(
  res: ServerResponse,
  err: unknown,
  format: OutputFormat,
  logger: Logger,
  logFields?: Record<string, unknown>,
): ApiError {
  const apiErr = toApiError(err);
  if (!isApiError(err)) {
    logger.error('internal error serving request', { ...logFields, error: describe(err) });
  }
  if (res.headersSent) {
    res.destroy();
    return apiErr;
  }
  const retryAfter = apiErr.details?.retryAfterSeconds;
  if (retryAfter !== undefined && retryAfter > 0) res.setHeader('Retry-After', String(retryAfter));
  try {
    writeObject(res, apiErr.code, apiErr.toStatus(), format);
  } catch (writeErr) {
    logger.error('failed to write error response', { ...logFields, error: describe(writeErr) });
    res.destroy();
  }
  return apiErr;
}

/** An error's message and stack for the log (never sent to clients). */
export function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
