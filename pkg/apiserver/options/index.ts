export { ServerOptions, DEFAULT_OPTIONS } from './options.js';
export type { ServerOptionValues, ServerConfig, Lifecycle } from './options.js';
export { parseFlags, usage } from './flags.js';
export { run, startServer } from './serve.js';
export type { RunningServer, ServeOptions } from './serve.js';
export { MANAGEMENT_PATH_PREFIX, API_VERSION } from './constants.js';
export { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
