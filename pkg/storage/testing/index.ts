// The storage conformance suite and the helpers its cases use.
export { runStorageConformance } from './conformance.js';
export type { ConformanceEnv } from './conformance.js';
export { EventReader, labelEquals, nameIn, widget, withTimeout } from './helpers.js';
export { PROVIDERS, runEncryptionConformance } from './encryption-cases.js';
export type { ProviderFactory, RawBackend } from './encryption-cases.js';
