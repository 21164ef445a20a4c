// Tests of the whole server in this process: start it on a free port over a fresh
// data directory, with the bootstrap admin's CA and key at hand.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { parse } from 'yaml';

import type { KubeConfig } from '../kubeconfig/types.js';
import { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions, type ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { run, type RunningServer, type ServeOptions } from './serve.js';

export interface ServerWithAdmin {
  readonly server: RunningServer;
  /** The serving CA (PEM), for clients to verify the server. */
  readonly ca: string;
  /** The bootstrap admin's access key. */
  readonly token: string;
}

/** A server (on SQLite unless `given` says otherwise) in `dataDir`, logging errors only, stopped by the caller. */
export async function startWithAdmin(
  dataDir: string,
  serveOptions: ServeOptions = {},
  given: Partial<ServerOptionValues> = {},
): Promise<ServerWithAdmin> {
  const options = new ServerOptions({ dataDir, securePort: 0, logLevel: 'error', ...given }).complete();
  assert.deepEqual(options.validate(), []);
  const server = await run(options, new JsonLogger('error', { write: () => true }), {
    shutdownTimeoutMs: 5000,
    ...serveOptions,
  });
  return { server, ...adminCredentials(dataDir) };
}

/** The serving CA and the bootstrap admin's key, from the admin kube config the server wrote in `dataDir`. */
export function adminCredentials(dataDir: string): { ca: string; token: string } {
  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  return {
    ca: Buffer.from(kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
    token: kubeconfig.users[0]?.user.token ?? '',
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** How long the answer took, from sending to its end. */
  readonly ms: number;
}

export interface CallOptions {
  /** Default GET. */
  readonly method?: string;
  /** Sent as a bearer token when given. */
  readonly token?: string;
  /** Sent JSON-encoded when given. */
  readonly body?: unknown;
  /** The content-type header: sent when given, else application/json with a body and none without. */
  readonly contentType?: string;
  /** Called once the response's head has arrived (before its body). */
  readonly onResponse?: () => void;
}

/** One HTTPS request on a fresh connection (no agent), trusting `ca`; the whole answer as text. */
export function httpsCall(url: string, ca: string, options: CallOptions = {}): Promise<Answer> {
  const { method = 'GET', token, body, onResponse } = options;
  const contentType = options.contentType ?? (body === undefined ? undefined : 'application/json');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca,
        agent: false,
        headers: {
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(contentType !== undefined ? { 'content-type': contentType } : {}),
        },
      },
      (res) => {
        onResponse?.();
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, ms: Date.now() - started }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** One HTTPS request on a fresh connection, with a bearer token and an optional JSON body. */
export function callServer(
  url: string,
  ca: string,
  token: string,
  method = 'GET',
  body?: unknown,
): Promise<Answer> {
  return httpsCall(url, ca, { method, token, body, contentType: 'application/json' });
}
