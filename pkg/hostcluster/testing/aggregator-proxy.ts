// The aggregator double's connection to the aggregated server, as kube-aggregator's
// proxy handler holds it (pkg/apiserver/handler_proxy.go): TLS verified against the
// APIService caBundle with ServerName <service>.<namespace>.svc, the front-proxy
// client certificate, X-Remote-* headers from the authenticated user; the client
// requests it proxies (streamed, hop-by-hop headers dropped) and the requests the
// controllers make through it, each recorded for tests.

import { request, Agent } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { APIServiceSpec } from './aggregator-apiservice.js';
import { appendHeader, writePlain } from './aggregator-http.js';
import {
  authProxyHeaders,
  HOP_BY_HOP,
  isDroppedRequestHeader,
  reencodeQuery,
  type ProxiedUser,
} from './aggregator-wire.js';

/** The deadline kube-aggregator puts on discovery of a group version (and nothing else it proxies). */
export const DISCOVERY_TIMEOUT_MS = 5_000;

export type AggregatorController = 'availability' | 'discovery' | 'openapi-v2' | 'openapi-v3';

/** One request a controller of the double made to the aggregated server, and its answer. */
export interface AggregatorFetch {
  readonly controller: AggregatorController;
  readonly path: string;
  readonly user: ProxiedUser;
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface AggregatorDoubleOptions {
  readonly apiService: APIServiceSpec;
  /** Where the Service routes to (what endpoint resolution would give): the aggregated server's address. */
  readonly endpoint: { readonly host: string; readonly port: number };
  /** kube-apiserver's --proxy-client-cert-file/--proxy-client-key-file: a front-proxy client certificate. */
  readonly proxyClient: { readonly certPem: string; readonly keyPem: string };
}

export interface Captured {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export class AggregatedServerConnection {
  /** Every request the controllers made, in order. */
  readonly fetches: AggregatorFetch[] = [];
  private readonly agent = new Agent({ keepAlive: true });

  constructor(
    private readonly options: AggregatorDoubleOptions,
    /** Whether the APIService is Available: the proxy answers 503 until it is. */
    private readonly available: () => boolean,
  ) {}

  destroy(): void {
    this.agent.destroy();
  }

  private tlsOptions(): {
    host: string;
    port: number;
    servername: string;
    ca?: string;
    cert: string;
    key: string;
    rejectUnauthorized: boolean;
  } {
    const { apiService, endpoint, proxyClient } = this.options;
    const insecure = apiService.insecureSkipTLSVerify === true;
    return {
      host: endpoint.host,
      port: endpoint.port,
      // BuildTransportConfig: the certificate must name the Service, whatever address it is reached at.
      servername: `${apiService.service.name}.${apiService.service.namespace}.svc`,
      ...(apiService.caBundle ? { ca: apiService.caBundle } : {}),
      cert: proxyClient.certPem,
      key: proxyClient.keyPem,
      rejectUnauthorized: !insecure,
    };
  }

  /**
   * One request from a controller, recorded. `pooled` false opens a fresh
   * connection (the availability check builds a new transport each sync).
   */
  send(
    controller: AggregatorController,
    user: ProxiedUser,
    method: string,
    path: string,
    headers: Record<string, string>,
    timeoutMs: number,
    pooled = true,
  ): Promise<Captured> {
    const outgoing: OutgoingHttpHeaders = { ...headers };
    for (const [name, value] of authProxyHeaders(user)) appendHeader(outgoing, name, value);
    return new Promise<Captured>((resolve, reject) => {
      const req = request(
        {
          ...this.tlsOptions(),
          method,
          path,
          headers: outgoing,
          agent: pooled ? this.agent : false,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const captured = {
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            };
            this.fetches.push({ controller, path, user, requestHeaders: headers, ...captured });
            resolve(captured);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('Client.Timeout exceeded while awaiting headers')));
      req.on('error', reject);
      req.end();
    });
  }

  /**
   * A controller's request through the proxy handler, as kube-aggregator makes
   * them (in memory, wrapped in http.TimeoutHandler): 503 while unavailable, the
   * backend's answer, 503 with the error when it cannot be reached.
   */
  async throughProxy(
    controller: AggregatorController,
    user: ProxiedUser,
    path: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<Captured> {
    if (!this.available()) {
      const unavailable = {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'service unavailable\n',
      };
      this.fetches.push({ controller, path, user, requestHeaders: headers, ...unavailable });
      return unavailable;
    }
    try {
      return await this.send(controller, user, 'GET', path, headers, timeoutMs);
    } catch (err) {
      const timedOut = (err as Error).message.includes('Timeout');
      const failed = {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: timedOut ? 'request timed out' : `${(err as Error).message}\n`,
      };
      this.fetches.push({ controller, path, user, requestHeaders: headers, ...failed });
      return failed;
    }
  }

  /** Proxies a client's request (handler_proxy.go); 503 text/plain while the APIService is not Available. */
  proxy(req: IncomingMessage, res: ServerResponse, user: ProxiedUser, path: string, rawQuery: string): void {
    if (!this.available()) {
      writePlain(res, 503, 'service unavailable\n');
      return;
    }
    const headers: OutgoingHttpHeaders = {};
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] ?? '';
      if (!isDroppedRequestHeader(name)) appendHeader(headers, name, raw[i + 1] ?? '');
    }
    for (const [name, value] of authProxyHeaders(user)) appendHeader(headers, name, value);
    appendHeader(headers, 'X-Forwarded-For', req.socket.remoteAddress ?? '127.0.0.1');
    const query = reencodeQuery(rawQuery);
    const upstream = request({
      ...this.tlsOptions(),
      agent: this.agent,
      method: req.method ?? 'GET',
      path: query ? `${path}?${query}` : path,
      headers,
    });
    // Only discovery of the group version has a deadline; watches and other long requests have none.
    const { group, version } = this.options.apiService;
    const deadline =
      path === `/apis/${group}/${version}`
        ? setTimeout(() => upstream.destroy(new Error('context deadline exceeded')), DISCOVERY_TIMEOUT_MS)
        : undefined;
    upstream.on('response', (answer) => {
      const out: OutgoingHttpHeaders = {};
      const rawOut = answer.rawHeaders;
      for (let i = 0; i + 1 < rawOut.length; i += 2) {
        const name = rawOut[i] ?? '';
        if (!HOP_BY_HOP.has(name.toLowerCase())) appendHeader(out, name, rawOut[i + 1] ?? '');
      }
      res.writeHead(answer.statusCode ?? 502, out);
      res.flushHeaders();
      answer.pipe(res);
      answer.on('end', () => clearTimeout(deadline));
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => {
      clearTimeout(deadline);
      if (!res.headersSent) writePlain(res, 503, `${err.message}\n`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
