// Tests of the whole server in this process: start it on a free port over a fresh
// data directory, with the bootstrap admin's CA and key at hand.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

import type { KubeConfig } from '../../kubeconfig/types.js';
import { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
import { JsonLogger } from './logger.js';
import { ServerOptions } from './options.js';
import { run, type RunningServer, type ServeOptions } from './serve.js';

export interface ServerWithAdmin {
  readonly server: RunningServer;
  /** The serving CA (PEM), for clients to verify the server. */
  readonly ca: string;
  /** The bootstrap admin's access key. */
  readonly token: string;
}

/** A server on SQLite in `dataDir`, logging errors only, stopped by the caller. */
export async function startWithAdmin(
  dataDir: string,
  serveOptions: ServeOptions = {},
): Promise<ServerWithAdmin> {
  const options = new ServerOptions({ dataDir, securePort: 0, logLevel: 'error' }).complete();
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
