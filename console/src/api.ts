// The console's only way to the server: the public API, with the caller's own access
// key as a bearer token. Failures become ApiError carrying the Kubernetes Status.

import type { JsonPatchOperation } from './field-patch.js';
import { readWatchStream, type WatchEvent } from './watch-stream.js';

export interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: Status,
  ) {
    super(status.message || `request failed with HTTP ${code}`);
  }

  /** The server's answer to an unknown key: 401 whose Status says no more than "Unauthorized". */
  get isBareUnauthorized(): boolean {
    return this.code === 401 && (!this.status.message || this.status.message === 'Unauthorized');
  }
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  creationTimestamp?: string | null;
  /** Set once a delete was asked for; the object stays until its finalizers are gone. */
  deletionTimestamp?: string | null;
  finalizers?: string[];
  annotations?: Record<string, string>;
}

export interface KubeObject<Spec = Record<string, unknown>, St = Record<string, unknown>> {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: St;
}

export interface List<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

export interface ConsoleConfig {
  group: string;
  version: string;
}

/** Where the API is: the path the console was served under, less `/console/...`. */
export function apiPrefix(pathname: string): string {
  const at = pathname.lastIndexOf('/console/');
  return at < 0 ? '' : pathname.slice(0, at);
}

export class ApiClient {
  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {}

  /** `base` is e.g. `/kubernetes/management/apis/management.platform.dev/v1`. */
  static forGroup(prefix: string, config: ConsoleConfig, key: string): ApiClient {
    return new ApiClient(`${prefix}/apis/${config.group}/${config.version}`, key);
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body);
  }

  mergePatch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body, 'application/merge-patch+json');
  }

  /** RFC 6902 (`application/json-patch+json`): applied whole, or refused whole (422) when a `test` fails. */
  jsonPatch<T>(path: string, operations: readonly JsonPatchOperation[]): Promise<T> {
    return this.request<T>('PATCH', path, operations, 'application/json-patch+json');
  }

  delete(path: string): Promise<unknown> {
    return this.request('DELETE', path);
  }

  /**
   * Watches a collection from `resourceVersion` (fetch streaming of `?watch=1`, with
   * `selector` as extra query, e.g. `fieldSelector=metadata.name%3Dx`), calling
   * `onEvent` with each event until the server ends the watch, `signal` aborts it, or
   * the connection drops. Resolves when it ends; rejects with ApiError on a refused
   * watch (its HTTP status), or with the network's error on a dropped connection.
   */
  async watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
    selector = '',
  ): Promise<void> {
    const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
    const res = await fetch(`${this.base}${path}?${selector ? `${selector}&` : ''}${query}`, {
      headers: { Accept: 'application/json', Authorization: `Bearer ${this.key}` },
      credentials: 'omit',
      cache: 'no-store',
      signal,
    });
    if (!res.ok || !res.body) {
      const text = await res.text();
      let status: Status = { message: text.trim() || res.statusText };
      try {
        status = JSON.parse(text) as Status;
      } catch {
        // not a Status: keep the text
      }
      throw new ApiError(res.status, status);
    }
    await readWatchStream(res.body, onEvent);
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `Bearer ${this.key}`,
    };
    if (body !== undefined) headers['Content-Type'] = contentType;
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, { message: 'The server cannot be reached' });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const status: Status =
        parsed && typeof parsed === 'object'
          ? (parsed as Status)
          : { message: text.trim() || res.statusText };
      throw new ApiError(res.status, status);
    }
    return parsed as T;
  }
}

/** The console's settings (the API group), served beside the page. */
export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch('./config.json', { cache: 'no-store' });
  if (!res.ok) throw new Error(`cannot load the console's settings (HTTP ${res.status})`);
  return (await res.json()) as ConsoleConfig;
}

/** A failure's message for an element with role "alert". */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
