// The HTTP layer's entry point: `createApiHandler(config)` gives the request listener
// that pkg/server mounts on its node:https server.

import { newApiHandler, type ApiHandler } from './api-handler.js';
import type { ApiServerConfig } from './config.js';
import { defaultDocumentBuilders } from './document-builders.js';

export type { ApiHandler } from './api-handler.js';

export function createApiHandler(config: ApiServerConfig): ApiHandler {
  return newApiHandler(config, defaultDocumentBuilders);
}
