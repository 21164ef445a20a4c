// The watch cache: a Storage decorator serving reads and watches from memory.
export { CachedStorage, prefixAtDepth } from './cached-storage.js';
export type { CachedStorageOptions, CacheState } from './cached-storage.js';
export { eventFreshMs } from './event-history.js';
