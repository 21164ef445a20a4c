// The in-server garbage collector as the server runs it: one informer per stored
// kind of the group (a list, then the watch, both served by the watch cache, so an
// event costs no storage read), all feeding one graph; the workers start once
// every kind has been listed, as upstream's collector waits for its monitors to
// sync, so that an owner listed a moment after its dependent is not looked up.

import type { Logger } from '../../util/log/index.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { Informer } from '../../identity/informer.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import type { Storage } from '../../storage/interfaces.js';
import { StoreClient } from './client.js';
import { GarbageCollector } from './garbage-collector.js';
import type { InvalidOwnerReferences } from './invalid-references.js';

export interface GarbageCollectorControllerOptions {
  readonly storage: Storage;
  /** The storage prefix of a resource's collection (ends with "/"). */
  readonly collectionPrefix: (resource: string) => string;
  /** The kinds' Stores, unfiltered: the collector acts for the system, not for a caller. */
  readonly stores: readonly RESTStorage[];
  readonly logger?: Logger;
  /** Longest wait for the first lists before the workers start anyway. */
  readonly syncTimeoutMs?: number;
}

export class GarbageCollectorController {
  private readonly collector: GarbageCollector;
  private readonly informers: Informer[];
  private started: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: GarbageCollectorControllerOptions) {
    const stores = options.stores.filter(
      (s) => s.get && s.delete && s.patch && s.info.verbs.includes('watch'),
    );
    this.collector = new GarbageCollector({
      client: new StoreClient(stores),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const builder = this.collector.builder;
    this.informers = stores.map((store) => {
      const { group, version, kind, resource } = store.info;
      const apiVersion = group ? `${group}/${version}` : version;
      const typed = (obj: KubeObject): KubeObject =>
        obj.apiVersion === apiVersion && obj.kind === kind ? obj : { ...obj, apiVersion, kind };
      return new Informer({
        storage: options.storage,
        prefix: options.collectionPrefix(resource),
        name: `garbage-collector/${resource}`,
        ...(options.logger ? { logger: options.logger } : {}),
        handler: {
          replace: (items) => builder.replace(apiVersion, kind, items),
          upsert: (obj) => builder.upsert(typed(obj)),
          remove: (obj) => builder.remove(typed(obj)),
        },
      });
    });
  }

  /** Owner references that can never be valid, counted (for a metrics registry to read). */
  get invalidOwnerReferences(): InvalidOwnerReferences {
    return this.collector.invalidReferences;
  }

  /** Starts watching, and the workers once every kind is listed; idempotent. */
  start(): void {
    this.started ??= (async () => {
      for (const informer of this.informers) informer.start();
      const timeout = this.options.syncTimeoutMs ?? 60_000;
      const synced = await Promise.all(this.informers.map((i) => i.waitForSync(timeout)));
      if (this.stopped) return;
      if (synced.includes(false))
        this.options.logger?.warn('garbage collector: starting before every kind was listed');
      this.collector.run();
      this.options.logger?.info('garbage collector started', { kinds: this.informers.length });
    })();
  }

  /** Stops the informers and the workers (the items in hand finish first). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.informers.map((i) => i.stop()));
    // Not waiting for `started`: it may still wait for a first list that will never come.
    await this.collector.stop();
  }
}
