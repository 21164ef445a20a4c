// The transformer storage asks for a key: it names a group and resource
// (<prefix>/<group>/<resource>/...), and the configuration in force names the
// transformer. The configuration can be swapped while the server runs
// (--encryption-provider-config-automatic-reload): every read and write asks for
// the current one, so a reload takes effect at the next request, as upstream's
// DynamicTransformers do.

import type { ResourceTransformers } from './encryption-config.js';
import type { Transformer } from './transformer.js';
import { IDENTITY } from './identity.js';

export class DynamicResourceTransformers {
  constructor(private current: ResourceTransformers | undefined) {}

  /**
   * Puts a new configuration in force. The old one's plugin connections close once
   * the calls it already started are done (their deadline), as upstream's
   * DynamicTransformers.Set waits kmsCloseGracePeriod: a read that began under the
   * old configuration is not cut off by the reload.
   */
  set(next: ResourceTransformers): void {
    const old = this.current;
    this.current = next;
    if (!old) return;
    const grace = old.closeGracePeriodMs;
    if (grace === 0) old.close();
    else setTimeout(() => old.close(), grace).unref();
  }

  /** Whether the configuration in force has a kms provider. */
  get usesKMS(): boolean {
    return this.current?.usesKMS ?? false;
  }

  /** The configuration in force's `kms-providers` health check. */
  checkKMS(): Promise<void> {
    return this.current?.checkKMS() ?? Promise.resolve();
  }

  transformerFor(group: string, resource: string): Transformer {
    return this.current?.transformerFor(group, resource) ?? IDENTITY;
  }

  close(): void {
    this.current?.close();
    this.current = undefined;
  }
}

/**
 * Maps a storage key to its group and resource: keys are `<root>/<group>/<resource>/...`.
 * Keys outside that layout have no resource (and are stored as given).
 */
export function keyResolver(root: string): (key: string) => { group: string; resource: string } | undefined {
  const base = root.endsWith('/') ? root : `${root}/`;
  return (key) => {
    if (!key.startsWith(base)) return undefined;
    const [group, resource] = key.slice(base.length).split('/', 3);
    if (!group || !resource) return undefined;
    return { group, resource };
  };
}
