// Serving and stopping. startServer() listens on HTTPS, runs the first-start
// bootstrap, logs the "serving" line (tests and scripts read it to learn the port
// when --secure-port is 0) and returns a handle whose stop() shuts down in the
// order that loses no acknowledged request: fail readiness, stop accepting
// connections, end watches and let in-flight requests finish (bounded), then stop
// the access key watch and close storage.

import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createApiHandler } from '../apiserver/server.js';
import { bootstrapAdmin, localServerUrl, type BootstrapResult } from './bootstrap.js';
import { MANAGEMENT_PATH_PREFIX } from './constants.js';
import { writeBootstrapSecret } from './bootstrap-secret.js';
import type { Logger } from '../util/log/index.js';
import type { ServerOptions } from '../apiserver/options/server-run-options.js';
import { buildServerConfig, type ServerConfig } from './config.js';

/** How long another replica's first start may take to hand the admin key over (see bootstrap.ts). */
const BOOTSTRAP_HANDOVER_GRACE_MS = 30_000;

export interface RunningServer {
  /** Where a local client reaches the server, e.g. https://127.0.0.1:8443 */
  readonly url: string;
  readonly port: number;
  readonly bootstrap: BootstrapResult;
  /** Graceful shutdown; idempotent; resolves when storage is closed. */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** How long in-flight requests may take to finish after a stop (default 30 s). */
  readonly shutdownTimeoutMs?: number;
  /** How long a client may take to send its request headers (default 32 s, as kube-apiserver's ReadHeaderTimeout). */
  readonly headersTimeoutMs?: number;
}

/** kube-apiserver's secure serving: ReadHeaderTimeout, IdleTimeout and MaxHeaderBytes. */
const HEADERS_TIMEOUT_MS = 32_000;
const IDLE_TIMEOUT_MS = 90_000;
const MAX_HEADER_BYTES = 1 << 20;
/** How often Node looks for connections past their header or request timeout (its default is 30 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

export async function startServer(
  config: ServerConfig,
  serveOptions: ServeOptions = {},
): Promise<RunningServer> {
  const { options, logger, tls, storage, accessKeys, lifecycle } = config;
  const shutdownTimeoutMs = serveOptions.shutdownTimeoutMs ?? 30_000;
  accessKeys.start();
  config.host.start();
  config.garbageCollector?.start();
  const handler = createApiHandler(config.api);
  const server = createServer(
    {
      cert: tls.certPem,
      key: tls.keyPem,
      minVersion: 'TLSv1.2',
      // Ask for a client certificate (the host aggregator's front-proxy certificate) but do not
      // require or judge it here: most callers have none, and the front-proxy authenticator
      // verifies it per request against the request-header CA in force (which may rotate).
      requestCert: true,
      rejectUnauthorized: false,
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    (req, res) => handler.handle(req, res),
  );
  // Slow or idle clients (slowloris) cannot hold connections: headers must arrive
  // within 32 s, the whole request (headers and body) within --request-timeout, and a
  // kept-alive connection idle for 90 s is closed.
  const headersTimeoutMs = serveOptions.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = Math.max(options.requestTimeoutMs, headersTimeoutMs);
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  const sockets = new Set<Socket>();
  // One listener for every socket (a socket closes once), not a closure each wrapped by
  // once(): ~250 B of every open connection, an idle watch's included.
  const forgetSocket = function (this: Socket): void {
    sockets.delete(this);
  };
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', forgetSocket);
  });
  server.on('tlsClientError', (err) => logger.warn('TLS handshake failed', { error: err.message }));

  const cleanupAfterFailure = async (): Promise<void> => {
    server.close();
    for (const s of sockets) s.destroy();
    await handler.shutdown().catch(() => undefined);
    await handler.flushAudit().catch(() => undefined);
    await accessKeys.stop().catch(() => undefined);
    await config.garbageCollector?.stop().catch(() => undefined);
    await config.host.stop().catch(() => undefined);
    await storage.close().catch(() => undefined);
  };

  try {
    await listen(server, options.securePort, options.bindAddress);
  } catch (err) {
    await cleanupAfterFailure();
    const code = (err as { code?: unknown }).code;
    if (code === 'EADDRINUSE')
      throw new Error(
        `cannot listen on ${options.bindAddress}:${options.securePort}: the port is in use (another server still running?); ` +
          `stop it, or choose another port with --secure-port (npm start -- --secure-port ${options.securePort === 8443 ? 9443 : 8443})`,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new Error(`cannot listen on ${options.bindAddress}: no such local address`);
    if (code === 'EACCES') throw new Error(`cannot listen on port ${options.securePort}: permission denied`);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  config.listening?.(port);
  const url = localServerUrl(options.bindAddress, port, '');

  const { host, bootstrapSecret: secretRef } = config.host;
  const bootstrapSecret =
    host && secretRef
      ? (key: string) => writeBootstrapSecret({ host, ...secretRef }, options.adminUsername, key)
      : undefined;
  let bootstrap: BootstrapResult;
  try {
    bootstrap = await bootstrapAdmin({
      resources: config.resources,
      group: options.apiGroup,
      adminUsername: options.adminUsername,
      dataDir: options.dataDir,
      serverUrl: localServerUrl(options.bindAddress, port, MANAGEMENT_PATH_PREFIX),
      ...(tls.caPem ? { caPem: tls.caPem } : {}),
      ...(bootstrapSecret ? { writeKeySecret: bootstrapSecret } : {}),
      // Replicas share etcd; the embedded database is this process's alone.
      handoverGraceMs: options.storageBackend === 'etcd3' ? BOOTSTRAP_HANDOVER_GRACE_MS : 0,
      logger,
    });
  } catch (err) {
    await cleanupAfterFailure();
    throw err;
  }
  if (config.keyOwnerMigration) {
    try {
      const { updated, orphaned, failed } = await config.keyOwnerMigration();
      if (updated > 0 || failed > 0)
        logger.info('access keys: owner references added to keys stored without one', { updated, failed });
      // Names only (never a key's value or hash): an operator can tell whose keys stopped working.
      if (orphaned.length > 0)
        logger.warn(
          "access keys: keys of a former owner of their owner's name found; they authenticate nobody",
          { orphaned: orphaned.length, keys: orphaned.slice(0, 20) },
        );
    } catch (err) {
      // Not fatal: the keys work as before, and the next start tries again.
      logger.warn('access keys: adding owner references failed', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  // Ready means the admin kube config works: wait until the key has reached the authenticator.
  if (bootstrap.outcome === 'created' && !(await accessKeys.waitForKey(bootstrap.keyHash, 30_000))) {
    logger.warn('bootstrap: the admin key has not reached the access key index yet');
  }
  lifecycle.bootstrapped = true;
  logger.info('serving', {
    url,
    apiUrl: url + MANAGEMENT_PATH_PREFIX,
    address: options.bindAddress,
    port,
    group: options.apiGroup,
    storage: options.storageBackend,
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      lifecycle.shuttingDown = true;
      logger.info('shutting down');
      const deadline = Date.now() + shutdownTimeoutMs;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = await withDeadline(handler.shutdown(), deadline);
      server.closeIdleConnections();
      const allClosed = drained && (await withDeadline(closed, deadline));
      if (!allClosed) {
        logger.warn('requests still running at the shutdown deadline; closing their connections', {
          connections: sockets.size,
        });
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }
      // Batched audit events are written before the server stops, even after a drain that
      // hit its deadline; a slow webhook gets a bound of its own rather than the requests'.
      if (!(await withDeadline(handler.flushAudit(), Date.now() + shutdownTimeoutMs))) {
        logger.warn('audit events still unwritten at the shutdown deadline; stopping without them');
      }
      await accessKeys.stop();
      await config.garbageCollector?.stop();
      await config.host.stop();
      await storage.close();
      logger.info('stopped');
    })();
    return stopping;
  };
  return { url, port, bootstrap, stop };
}

/** Builds the configuration and serves it: what main runs after validate(). */
export async function run(
  options: ServerOptions,
  logger?: Logger,
  serveOptions?: ServeOptions,
): Promise<RunningServer> {
  const config = await buildServerConfig(options, logger);
  return startServer(config, serveOptions);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** True when `p` settled before the deadline. */
async function withDeadline(p: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>(
    (resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))),
  );
  try {
    return await Promise.race([
      p.then(
        () => true as const,
        () => true as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
