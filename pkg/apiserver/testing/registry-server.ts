// An in-process server over the real registry (generic Store with the management
// strategies) and embedded in-memory SQLite, on a loopback port: the wire behaviour
// kubectl and client libraries see, without starting a process.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { KVStorage } from '../../storage/store.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { buildResources } from '../../server/resources.js';
import { createApiHandler } from '../server.js';
import { ADMIN, FakeAuthenticator, FakeAuthorizer, RecordingLogger, TEST_VERSION_INFO } from './fakes.js';

export const REGISTRY_GROUP = 'management.platform.dev';

export interface RegistryServer {
  readonly url: string;
  readonly logger: RecordingLogger;
  close(): Promise<void>;
}

/** Serves every management kind to `Bearer admin-token` (an admin), under the root and `pathPrefixes`. */
export async function startRegistryServer(pathPrefixes: readonly string[] = []): Promise<RegistryServer> {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const logger = new RecordingLogger();
  const handler = createApiHandler({
    group: REGISTRY_GROUP,
    version: 'v1',
    resources: buildResources(REGISTRY_GROUP, storage, '/registry'),
    authenticator: new FakeAuthenticator({ 'admin-token': ADMIN }),
    authorizer: new FakeAuthorizer(),
    pathPrefixes: [...pathPrefixes],
    versionInfo: TEST_VERSION_INFO,
    logger,
  });
  const server = createServer((req, res) => handler.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logger,
    async close() {
      await handler.shutdown();
      await handler.flushAudit();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await storage.close();
    },
  };
}
