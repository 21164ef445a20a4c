// The aggregator double's availability controller (kube-aggregator's
// pkg/controllers/status/remote): five parallel GETs of /apis/<group>/<version> as
// system:kube-aggregator in system:masters, fresh TLS connections, 5 s each,
// redirects not followed; any 2xx/3xx makes the APIService Available (reason Passed,
// "all checks passed"), otherwise False/FailedDiscoveryCheck with the last error.
// No Service/EndpointSlice checks: the endpoint is given.

import type { APIServiceCondition } from './aggregator-apiservice.js';
import { KUBE_AGGREGATOR } from './aggregator-discovery.js';
import type { AggregatedServerConnection, AggregatorDoubleOptions } from './aggregator-proxy.js';

const PROBE_TIMEOUT_MS = 5_000;
const PROBE_HARD_TIMEOUT_MS = 6_000;
const PROBE_ATTEMPTS = 5;

export class AvailabilityController {
  /** The Available condition, once check() has run. */
  condition: APIServiceCondition | undefined;
  /** The APIService's resourceVersion: it moves when the condition changes. */
  resourceVersion = 1;

  constructor(
    private readonly options: AggregatorDoubleOptions,
    private readonly connection: AggregatedServerConnection,
  ) {}

  async check(): Promise<APIServiceCondition> {
    const { group, version } = this.options.apiService;
    const { host, port } = this.options.endpoint;
    const path = `/apis/${group}/${version}`;
    const url = `https://${host}:${port}${path}`;
    const attempt = async (): Promise<string | undefined> => {
      let timer: NodeJS.Timeout | undefined;
      const hard = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`timed out waiting for ${url}`), PROBE_HARD_TIMEOUT_MS);
      });
      const probe = this.connection
        .send('availability', KUBE_AGGREGATOR, 'GET', path, {}, PROBE_TIMEOUT_MS, false)
        .then(
          (r) =>
            r.status >= 200 && r.status < 300
              ? undefined
              : r.status >= 300 && r.status < 400
                ? undefined
                : `failing or missing response from ${url}: bad status from ${url}: ${r.status}`,
          (err: Error) => `failing or missing response from ${url}: Get "${url}": ${err.message}`,
        );
      try {
        return await Promise.race([probe, hard]);
      } finally {
        clearTimeout(timer);
      }
    };
    const results = await Promise.all(Array.from({ length: PROBE_ATTEMPTS }, attempt));
    const failures = results.filter((r): r is string => r !== undefined);
    const passed = failures.length < results.length;
    this.setCondition(
      passed
        ? { status: 'True', reason: 'Passed', message: 'all checks passed' }
        : { status: 'False', reason: 'FailedDiscoveryCheck', message: failures[failures.length - 1] ?? '' },
    );
    return this.condition as APIServiceCondition;
  }

  private setCondition(next: Pick<APIServiceCondition, 'status' | 'reason' | 'message'>): void {
    const previous = this.condition;
    const lastTransitionTime =
      previous && previous.status === next.status
        ? previous.lastTransitionTime
        : new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    if (
      previous?.status !== next.status ||
      previous.reason !== next.reason ||
      previous.message !== next.message
    )
      this.resourceVersion++;
    this.condition = { type: 'Available', ...next, lastTransitionTime };
  }
}
