// One `kms` provider with `apiVersion: v2`, as kmsPrefixTransformer builds it: a
// gRPC connection to the plugin, the probe that polls its Status and keeps the
// write DEK, and the envelope transformer that reads and writes with them. The
// DEK cache lives as long as the provider: a reload that builds a new provider
// unwraps DEKs again (once each), as upstream's rebuilt transformers do.

import { EncryptionConfigError, type KMSConfiguration, type KMSProvider } from '../encryption-config.js';
import { TtlCache } from '../../../util/ttl-cache.js';
import type { Transformer } from '../transformer.js';
import { DEK_CACHE_MAX_ENTRIES, EnvelopeTransformer } from './envelope.js';
import { GrpcKMSService, type KMSService } from './grpc-service.js';
import { KMSv2PluginProbe, UPSTREAM_TIMINGS, type ProbeLogger, type ProbeTimings } from './probe.js';

export interface KMSv2ProviderOptions {
  readonly logger?: ProbeLogger;
  readonly timings?: ProbeTimings;
  /** The plugin connection; by default gRPC to the configured endpoint. */
  readonly service?: KMSService;
  /** The clock of the DEK's expiry and the health check's reuse (tests move it). */
  readonly now?: () => number;
}

export function newKMSv2Provider(config: KMSConfiguration, options: KMSv2ProviderOptions = {}): KMSProvider {
  let service: KMSService;
  try {
    service = options.service ?? new GrpcKMSService(config.endpoint, config.timeoutMs);
  } catch (err) {
    throw new EncryptionConfigError(
      `could not configure KMSv2-Plugin's probe ${JSON.stringify(config.name)}, error: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const now = options.now ?? Date.now;
  const probe = new KMSv2PluginProbe(config.name, service, options.timings ?? UPSTREAM_TIMINGS, options.logger, now);
  const transformer = new EnvelopeTransformer(service, config.name, () => probe.currentState(), new TtlCache<Transformer>(DEK_CACHE_MAX_ENTRIES, now), now);
  return {
    transformer,
    check: () => probe.check(),
    primed: probe.primed,
    timeoutMs: config.timeoutMs,
    close: () => probe.close(),
  };
}
