// The platform's own metrics, for what kube-apiserver has no metric of: access-key
// authentications, the host cluster's reviews (SubjectAccessReview, TokenReview)
// and how well their 10 s caches serve. Named `platform_*` so nobody mistakes them for upstream's.

import { Counter, Histogram } from 'prom-client';

import { CounterFamily } from './families.js';
import { registry } from './registry.js';

/** How an access-key authentication ended. */
export type AccessKeyResult = 'success' | 'unknown' | 'rejected' | 'unavailable';

/** Counted on every authenticated request, so by handle (families.ts): `series({ result })` once, then inc(). */
export const accessKeyAuthentications = new CounterFamily({
  name: 'platform_access_key_authentications_total',
  help: 'Bearer tokens checked as access keys, by result: success, unknown (no such key), rejected (expired, disabled, or its user cannot log in) or unavailable (the key index was not ready).',
  labelNames: ['result'],
  registry,
});

/** Which review of the host cluster. */
export type HostReview = 'subjectaccessreview' | 'tokenreview';

export const hostReviewDuration = new Histogram({
  name: 'platform_host_review_duration_seconds',
  help: 'Latency of the reviews this server asks the host cluster for, by review and result (success or error).',
  labelNames: ['review', 'result'],
  // 1 ms to ~4 s: a host that answers slower than that is the problem to see.
  buckets: [0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096],
  registers: [registry],
});

export const hostReviewCacheLookups = new Counter({
  name: 'platform_host_review_cache_lookups_total',
  help: 'Look-ups of the 10 s cache of host review answers, by review and result: hit (answered from the cache, or shared with a review already under way) or miss (the host was asked).',
  labelNames: ['review', 'result'],
  registers: [registry],
});

/** Records one host review's look-up: `asked` is the call to the host, made only on a miss. */
export async function recordHostReview<T>(
  review: HostReview,
  lookup: (load: () => Promise<T>) => Promise<T>,
  asked: () => Promise<T>,
): Promise<T> {
  let missed = false;
  const result = await lookup(async () => {
    missed = true;
    const started = performance.now();
    let outcome = 'error';
    try {
      const value = await asked();
      outcome = 'success';
      return value;
    } finally {
      hostReviewDuration.observe({ review, result: outcome }, (performance.now() - started) / 1000);
    }
  }).finally(() => hostReviewCacheLookups.inc({ review, result: missed ? 'miss' : 'hit' }));
  return result;
}
