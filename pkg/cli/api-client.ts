// The management API as the command-line client uses it: JSON over HTTPS with the
// access key as bearer token, under `{base}/kubernetes/management/apis/{group}/v1`.
// Error Statuses become one-line messages; a 401 says whether the key is unknown or
// expired, because the two need different fixes.

import type { KubeObject, Status } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import { PlatformApiError } from './errors.js';
import type { Endpoint, HttpResponse } from './http.js';
import { httpRequest } from './http.js';
import { MANAGEMENT_PREFIX } from './platform-url.js';

export const DEFAULT_API_GROUP = 'management.platform.dev';

export interface KubeList<T = KubeObject> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

function parseJson(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function statusOf(body: unknown): Partial<Status> | undefined {
  return isObject(body) && body.kind === 'Status' ? (body as Partial<Status>) : undefined;
}

/** The one-line message for an error response; `server` names the platform in advice. */
export function failureMessage(res: HttpResponse, server: string): { message: string; reason?: string } {
  const status = statusOf(parseJson(res));
  const said = status?.message?.trim() || '';
  const reason = status?.reason;
  if (res.status === 401) {
    if (/expired/i.test(said)) {
      return {
        message: `the access key has expired (${said}); create a new key and log in again: platform login ${server} --access-key <new key>`,
        reason,
      };
    }
    if (said && said !== 'Unauthorized') return { message: `the access key was refused: ${said}`, reason };
    return {
      message: `the access key is invalid: the platform at ${server} does not accept it (401 Unauthorized); check the key, or create a new one`,
      reason,
    };
  }
  if (said) return { message: said, reason };
  const text = res.body.toString('utf8').split('\n')[0]?.trim().slice(0, 200) ?? '';
  return { message: `the platform answered ${res.status}${text ? `: ${text}` : ''}`, reason };
}

export class PlatformApi {
  constructor(
    readonly endpoint: Endpoint,
    readonly group: string,
    /** How to fix trust for this command, shown when the CA is unknown. */
    private readonly trustHint?: string,
  ) {}

  /** `/kubernetes/management/apis/<group>/v1`. */
  get root(): string {
    return `${MANAGEMENT_PREFIX}/apis/${this.group}/v1`;
  }

  /** A request to `path` under the base URL; a non-2xx answer throws PlatformApiError. */
  async request<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const res = await httpRequest(
      this.endpoint,
      method,
      path,
      { body: body === undefined ? undefined : JSON.stringify(body), contentType },
      this.trustHint,
    );
    if (res.status < 200 || res.status > 299) {
      const { message, reason } = failureMessage(res, this.endpoint.baseUrl);
      throw new PlatformApiError(message, res.status, reason);
    }
    const parsed = parseJson(res);
    if (parsed === undefined && res.body.length > 0) {
      throw new PlatformApiError(
        `the platform answered ${method} ${path} with something that is not JSON`,
        res.status,
        undefined,
      );
    }
    return parsed as T;
  }

  /** A request relative to the group-version root. */
  call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    return this.request<T>(method, this.root + path, body, contentType);
  }

  /** The object, or undefined on 404. */
  async getOptional<T>(path: string): Promise<T | undefined> {
    try {
      return await this.call<T>('GET', path);
    } catch (err) {
      if (err instanceof PlatformApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** The API groups the platform serves under the management prefix. */
  async groups(): Promise<string[]> {
    const list = await this.request<unknown>('GET', `${MANAGEMENT_PREFIX}/apis`);
    if (!isObject(list) || !Array.isArray(list.groups)) return [];
    return list.groups.flatMap((g) => (isObject(g) && typeof g.name === 'string' ? [g.name] : []));
  }
}

/** The API group to use: the only one served, or the default among several. */
export function chooseApiGroup(groups: readonly string[]): string | undefined {
  if (groups.length === 1) return groups[0];
  if (groups.includes(DEFAULT_API_GROUP)) return DEFAULT_API_GROUP;
  return undefined;
}
