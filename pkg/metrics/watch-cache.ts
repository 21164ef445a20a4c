// How current the watch caches are: upstream's apiserver_watch_cache_resource_version
// (pkg/storage/cacher/metrics: the revision each resource's cache has applied, by
// group and resource), and the platform's own lag, the revisions a cache is behind
// the newest revision storage reports, 0 once it has applied (or can prove it has)
// everything up to it; and upstream's watch_cache_capacity, the size of each cache's
// history window, with the counts of its resizes. A cache lagging for long serves stale lists and delays
// watches: the lag is what an alert watches. Read when scraped, bounded in time.

import { Counter, Gauge } from 'prom-client';

import { registry, ScrapeRead } from './registry.js';

export interface WatchCacheState {
  readonly group: string;
  readonly resource: string;
  /** The revision the cache has applied. */
  readonly revision: number;
  /** Revisions behind the newest revision storage reports; -1 when storage did not answer. */
  readonly lag: number;
  /** How many events the cache's history window holds before it resizes or drops one. */
  readonly capacity?: number;
  /** How many times the window doubled, and halved, since the cache started. */
  readonly capacityIncreases?: number;
  readonly capacityDecreases?: number;
}

/** What the storage layer tells the scrape. */
export interface WatchCacheSource {
  watchCaches(): Promise<readonly WatchCacheState[]>;
}

/** As the other storage gauges: a scrape waits at most this for storage. */
const TIMEOUT_MS = 1000;

let source: WatchCacheSource | undefined;
/** One look serves both gauges of a scrape. */
const last = new ScrapeRead<readonly WatchCacheState[]>(TIMEOUT_MS, []);

/** Sets (or with undefined, clears) where the caches' states come from. */
export function setWatchCacheSource(s: WatchCacheSource | undefined): void {
  source = s;
  last.forget();
}

function states(): Promise<readonly WatchCacheState[]> {
  const s = source;
  return s ? last.get(() => s.watchCaches()) : Promise.resolve([]);
}

type Figure = (c: WatchCacheState) => number | undefined;
type Labels = { group: string; resource: string };

/** Hands `record` each cache's figure by group and resource (none for a cache without it). */
async function eachFigure(figure: Figure, record: (labels: Labels, value: number) => void): Promise<void> {
  for (const c of await states()) {
    const value = figure(c);
    if (value !== undefined) record({ group: c.group, resource: c.resource }, value);
  }
}

const LABELS = { labelNames: ['group', 'resource'], registers: [registry] };

/** A gauge of one figure of each cache. */
function cacheGauge(name: string, help: string, figure: Figure): void {
  new Gauge({
    name,
    help,
    ...LABELS,
    async collect() {
      this.reset();
      await eachFigure(figure, (labels, value) => this.set(labels, value));
    },
  });
}

/** A counter that each cache keeps itself, read at scrape time. */
function cacheCounter(name: string, help: string, figure: Figure): void {
  new Counter({
    name,
    help,
    ...LABELS,
    async collect() {
      this.reset();
      await eachFigure(figure, (labels, value) => this.inc(labels, value));
    },
  });
}

cacheGauge(
  'apiserver_watch_cache_resource_version',
  'Current resource version of watch cache broken by resource type.',
  (c) => c.revision,
);
cacheGauge(
  'platform_watch_cache_resource_version_lag',
  'Revisions each watch cache is behind the newest revision storage reports (0 when current; -1 when storage did not answer).',
  (c) => c.lag,
);
// Upstream's watch_cache_capacity (no apiserver_ prefix there either): the history
// window's current size, which grows through bursts and shrinks back (event-history.ts).
cacheGauge(
  'watch_cache_capacity',
  'Total capacity of watch cache broken by resource type.',
  (c) => c.capacity,
);

cacheCounter(
  'watch_cache_capacity_increase_total',
  'Total number of watch cache capacity increase events broken by resource type.',
  (c) => c.capacityIncreases,
);
cacheCounter(
  'watch_cache_capacity_decrease_total',
  'Total number of watch cache capacity decrease events broken by resource type.',
  (c) => c.capacityDecreases,
);
