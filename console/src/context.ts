// What every view gets: the API client with the caller's key, and who the caller is.

import type { ApiClient } from './api.js';

export interface SelfStatus {
  user?: { name: string; displayName?: string; username?: string; teams?: { name: string }[] };
  team?: { name: string; displayName?: string };
  subject?: string;
  groups?: string[];
  accessKey?: string;
}

export interface Context {
  readonly api: ApiClient;
  readonly self: SelfStatus;
  /** Aborted when the user leaves the view (another route, or logging out): ends its watches. */
  readonly signal: AbortSignal;
  /** Moves to a route (`#/secrets/ns/name`). */
  go(route: string): void;
}

/** A view renders into `main` from the route's parameters. */
export type View = (ctx: Context, main: HTMLElement, params: string[]) => Promise<void>;
