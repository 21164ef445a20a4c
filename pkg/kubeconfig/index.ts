export type * from './types.js';
export { KubeConfigBuilder, serializeKubeConfig, singleContextKubeConfig } from './builder.js';
export type { ClusterOptions, UserOptions } from './builder.js';
