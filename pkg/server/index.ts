// The server's assembly (k8s.io/apiserver's pkg/server): built from the options of
// pkg/apiserver/options, served over HTTPS, bootstrapped, stopped.
export { buildServerConfig } from './config.js';
export type { ServerConfig, Lifecycle } from './config.js';
export { run, startServer } from './serve.js';
export type { RunningServer, ServeOptions } from './serve.js';
export { MANAGEMENT_PATH_PREFIX, API_VERSION } from './constants.js';
export { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
export { SERVER_NODE_FLAGS, SERVER_MIN_SEMI_SPACE_MIB, youngGeneration } from './node-flags.js';
