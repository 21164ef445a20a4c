export { ServerOptions, DEFAULT_OPTIONS } from '../../server/config.js';
export type { ServerOptionValues, ServerConfig, Lifecycle } from '../../server/config.js';
export { parseFlags, usage } from './flags.js';
export { run, startServer } from '../../server/serve.js';
export type { RunningServer, ServeOptions } from '../../server/serve.js';
export { JsonLogger, isLogLevel } from './logger.js';
export { MANAGEMENT_PATH_PREFIX, API_VERSION } from '../../server/constants.js';
export { ADMIN_KUBECONFIG_FILE } from '../../server/bootstrap.js';
