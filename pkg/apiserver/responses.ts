// Writing responses: objects and Status errors in the negotiated encoding, with the
// headers every API response carries. Nothing here throws: a failure after the
// headers went out can only be reported by cutting the connection.

import type { ServerResponse } from 'node:http';
import { stringify as yamlStringify } from 'yaml';

import { isApiError, toApiError, type ApiError } from '../apis/meta/errors.js';
import { cachedJSON, cachedListBody, cachedListJSON } from '../registry/generic/encoded.js';
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
  // Objects (and lists of them) served from the watch cache are encoded once per state.
  return `${cachedJSON(obj) ?? cachedListJSON(obj) ?? JSON.stringify(obj)}\n`;
}

export function writeObject(res: ServerResponse, code: number, obj: unknown, format: OutputFormat): void {
  const list = format.mediaType === JSON_MEDIA_TYPE && !format.pretty ? cachedListBody(obj) : undefined;
  if (list) {
    writeChunks(res, code, format, list.chunks, list.bytes);
    return;
  }
  const body = encode(obj, format);
  res.writeHead(code, {
    'Content-Type': format.contentType ?? format.mediaType,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * A list served from the watch cache, written as the chunks it was encoded in: the same
 * bytes and Content-Length as one string, without ever joining megabytes into one (and
 * the first chunks are on their way while the rest are converted to UTF-8).
 */
function writeChunks(
  res: ServerResponse,
  code: number,
  format: OutputFormat,
  chunks: readonly string[],
  bytes: number,
): void {
  res.writeHead(code, {
    'Content-Type': format.contentType ?? format.mediaType,
    'Content-Length': bytes + 1,
  });
  for (const chunk of chunks) res.write(chunk);
  res.end('\n');
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
