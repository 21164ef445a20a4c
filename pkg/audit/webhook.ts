// The webhook backend (k8s.io/apiserver plugin/pkg/audit/webhook and
// pkg/util/webhook): events are POSTed as an audit.k8s.io/v1 EventList to the server
// of the current context of a kube config file (--audit-webhook-config-file), with
// that context's TLS and credentials (client certificate, bearer token, basic auth),
// read by @kubernetes/client-node as every other kube config here is. A failed post
// is retried, whatever the error, with exponential backoff from
// --audit-webhook-initial-backoff (factor 1.5, 20% jitter, five tries), as upstream.

import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { Backoff } from '../util/backoff.js';
import type { AuditBackend, PluginErrorReporter } from './backend.js';
import { encodeEvent, encodeEventList } from './encode.js';
import type { Event } from './types.js';

export const WEBHOOK_PLUGIN = 'webhook';

/** upstream's DefaultInitialBackoff. */
export const DEFAULT_WEBHOOK_INITIAL_BACKOFF_MS = 10_000;
/** upstream's webhook request timeout. */
const REQUEST_TIMEOUT_MS = 30_000;
const BACKOFF_FACTOR = 1.5;
const BACKOFF_JITTER = 0.2;
const BACKOFF_STEPS = 5;

export interface WebhookTarget {
  readonly url: URL;
  readonly options: RequestOptions;
}

/** The webhook's address, TLS and credentials from a kube config file; throws with the reason when unusable. */
export async function loadWebhookTarget(configFile: string): Promise<WebhookTarget> {
  // Loaded when a webhook is configured: the library is large, and most servers have none.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(configFile);
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new Error(`initializing audit webhook: the current context of ${configFile} names no cluster`);
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(
      `initializing audit webhook: the cluster's server ${JSON.stringify(cluster.server)} is not a URL`,
    );
  }
  const options: RequestOptions & { headers: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(options);
  return { url, options };
}

export interface WebhookBackendOptions {
  readonly initialBackoffMs: number;
  /** Tests shorten the wait; default setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export class WebhookBackend implements AuditBackend {
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly target: WebhookTarget,
    private readonly options: WebhookBackendOptions,
    private readonly reportError: PluginErrorReporter,
  ) {
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()));
  }

  async processEvents(events: readonly Event[]): Promise<boolean> {
    // JSON.stringify of the EventList, written from each event's line (encode.ts).
    const body = encodeEventList(events.map(encodeEvent));
    // Uncapped: five tries bound it.
    const backoff = new Backoff(this.options.initialBackoffMs, Infinity, {
      factor: BACKOFF_FACTOR,
      jitter: BACKOFF_JITTER,
    });
    let lastError: unknown;
    for (let attempt = 0; attempt < BACKOFF_STEPS; attempt++) {
      if (attempt > 0) await this.sleep(backoff.step());
      try {
        await this.post(body);
        return true;
      } catch (err) {
        lastError = err;
      }
    }
    this.reportError(WEBHOOK_PLUGIN, lastError, events);
    return false;
  }

  private post(body: string): Promise<void> {
    const { url, options } = this.target;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise<void>((resolve, reject) => {
      const req = send(
        url,
        {
          ...options,
          method: 'POST',
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            ...(options.headers as Record<string, string> | undefined),
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'Content-Length': String(Buffer.byteLength(body)),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) resolve();
            else reject(new Error(`the audit webhook answered ${code}`));
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('the audit webhook did not answer in time')));
      req.on('error', reject);
      req.end(body);
    });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
