// The console's static files (built by Vite into dist/console at `npm run build`),
// served before authentication like the health paths: the page and its assets hold
// no secret, and the console then speaks only the public API with the caller's own
// access key. Only files under the console's directory are served; every answer
// carries a strict Content-Security-Policy so that no inline or third-party script
// can run in the page that holds a key.

import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeBytes } from './responses.js';

/** The console's URL path below the server's prefixes (`/kubernetes/management` in standalone mode). */
export const CONSOLE_PATH = '/console';

/** Where `npm run build` puts the console: dist/console, beside dist/pkg. */
export function defaultConsoleDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console');
}

/**
 * Sent with every console answer. Scripts and styles only from this origin (Vite emits
 * them as files, never inline), no framing, no base-URL or form hijacking, no referrer
 * leaking a path to anyone.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; " +
    "base-uri 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Vite names the files under assets/ by their content's hash: they never change. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Anything else (index.html, config.json) is revalidated so a new build shows at once. */
const REVALIDATE = 'no-cache';

/** What the console needs to know of the server and cannot discover without a key. */
export interface ConsoleSettings {
  readonly group: string;
  readonly version: string;
}

export class ConsoleFiles {
  private readonly root: string;
  private readonly configBytes: Buffer;

  constructor(root: string, settings: ConsoleSettings) {
    this.root = resolve(root);
    this.configBytes = Buffer.from(
      `${JSON.stringify({ group: settings.group, version: settings.version })}\n`,
    );
  }

  /** True when `path` (prefix already stripped) is the console's; then the answer is written. */
  matches(path: string): boolean {
    return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
  }

  /**
   * Answers a console path. `rawPath` and `rawQuery` are as requested (with the prefix), so
   * the redirect from `/console` keeps the prefix the browser used, and its query.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    rawPath: string,
    rawQuery: string,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      this.write(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (path === CONSOLE_PATH) {
      // As Go's http.FileServer (localRedirect) answers a directory asked for without its
      // slash: 301 to the same path with the slash, the query kept.
      const location = `${rawPath}/${rawQuery ? `?${rawQuery}` : ''}`;
      res.writeHead(301, { ...CONSOLE_SECURITY_HEADERS, Location: location, 'Content-Length': 0 });
      res.end();
      return;
    }
    const relative = path.slice(CONSOLE_PATH.length + 1);
    if (relative === 'config.json') {
      this.write(res, 200, 'application/json', this.configBytes, { 'Cache-Control': REVALIDATE });
      return;
    }
    const file = this.resolveFile(relative === '' ? 'index.html' : relative);
    const body = file === undefined ? undefined : await readRegularFile(file);
    if (file === undefined || body === undefined) {
      this.write(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
      return;
    }
    const contentType = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
    const cache = relative.startsWith('assets/') ? IMMUTABLE : REVALIDATE;
    this.write(res, 200, contentType, body, { 'Cache-Control': cache });
  }

  /**
   * The file a relative URL path names, or undefined when it could leave the root:
   * undecodable escapes, NUL, backslashes, `.`/`..` segments, empty segments, and (as
   * a last guard) any resolved path outside the root.
   */
  private resolveFile(relative: string): string | undefined {
    let decoded: string;
    try {
      decoded = decodeURIComponent(relative);
    } catch {
      return undefined;
    }
    if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
    const segments = decoded.split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
    const file = join(this.root, ...segments);
    if (!file.startsWith(this.root + sep)) return undefined;
    return file;
  }

  private write(
    res: ServerResponse,
    code: number,
    contentType: string,
    body: Buffer | string,
    headers?: Record<string, string>,
  ): void {
    writeBytes(res, code, contentType, body, { ...CONSOLE_SECURITY_HEADERS, ...headers });
  }
}

/** A regular file's bytes; undefined for a directory, a missing file or one that cannot be read. */
async function readRegularFile(file: string): Promise<Buffer | undefined> {
  try {
    if (!(await stat(file)).isFile()) return undefined;
    return await readFile(file);
  } catch {
    return undefined;
  }
}
