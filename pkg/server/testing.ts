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
  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  return {
    server,
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

/** One HTTPS request on a fresh connection, with a bearer token and an optional JSON body. */
export function callServer(
  url: string,
  ca: string,
  token: string,
  method = 'GET',
  body?: unknown,
): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca,
        agent: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
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
