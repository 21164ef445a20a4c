// Keeps User.status.teams current: the sorted names of the teams that name the
// user in spec.users or share one of the user's spec.groups. It reacts to the
// identity cache's changes (so it runs on every replica from the same watches),
// works out which users a change can affect, and rewrites their status one at a
// time, off any request path. Writes go through the User's status subresource
// (manager platform-team-status), and an unchanged status writes nothing, so
// replicas racing to write the same value cost one write in all.

import type { Logger } from '../util/log/index.js';
import { isApiError } from '../apis/meta/errors.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import { TEAMS, USERS, type IdentityCache, type IdentityChange } from './identity-cache.js';
import { specStrings } from './membership.js';
import { TEAM_STATUS_MANAGER, type StatusWriter } from './status-writer.js';

export interface TeamStatusControllerOptions {
  readonly cache: IdentityCache;
  /** Users' status subresource. */
  readonly writer: StatusWriter;
  readonly logger?: Logger;
}

/** status.teams as stored ([] when absent). */
export function statusTeams(user: KubeObject | undefined): string[] {
  const status = user?.['status'];
  if (!isObject(status) || !Array.isArray(status['teams'])) return [];
  return status['teams'].filter((t): t is string => typeof t === 'string');
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

const RETRY_DELAY_MS = 1000;

export class TeamStatusController {
  private readonly queue = new Set<string>();
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  /** Set once the cache has listed everything: before that, teams computed would be wrong. */
  private synced = false;

  constructor(private readonly options: TeamStatusControllerOptions) {}

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.options.cache.subscribe((change) => this.onChange(change));
    this.checkSynced();
  }

  /** On the first sync every user is reconciled; until then changes are not acted on. */
  private checkSynced(): boolean {
    if (this.synced) return true;
    if (!this.options.cache.hasSynced) return false;
    this.synced = true;
    this.enqueue(this.options.cache.allUserNames());
    return false;
  }

  /** Stops reacting; resolves when the write in progress (if any) is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.queue.clear();
    await this.running;
  }

  /** Resolves once every queued user has been reconciled (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private onChange(change: IdentityChange): void {
    if (!this.checkSynced()) return;
    const { cache } = this.options;
    if (change.resource === USERS) {
      if (change.type === 'replace') this.enqueue(cache.allUserNames());
      else if (change.type === 'upsert' && change.obj) this.enqueue([change.obj.metadata.name ?? '']);
      return;
    }
    if (change.resource !== TEAMS) return;
    if (change.type === 'replace') {
      this.enqueue(cache.allUserNames());
      return;
    }
    // Everyone the team named before or names now, directly or by group.
    const affected = new Set<string>();
    for (const team of [change.old, change.obj]) {
      for (const u of specStrings(team, 'users')) affected.add(u);
      for (const g of specStrings(team, 'groups')) for (const u of cache.usersInGroup(g)) affected.add(u);
    }
    this.enqueue(affected);
  }

  private enqueue(names: Iterable<string>): void {
    if (this.stopped) return;
    for (const name of names) if (name) this.queue.add(name);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const next = this.queue.values().next();
      if (next.done) return;
      this.queue.delete(next.value);
      await this.reconcile(next.value);
    }
  }

  private async reconcile(name: string): Promise<void> {
    const { cache, writer, logger } = this.options;
    const user = cache.user(name);
    if (!user) return; // not a User (a name in a team's list), or deleted
    const desired = cache.teamsOfUser(name);
    if (sameList(statusTeams(user), desired)) return;
    try {
      await writer.writeStatus(
        name,
        (current) => {
          // Decide on the freshest teams: the cache may have moved on meanwhile.
          const teams = cache.teamsOfUser(name);
          if (sameList(statusTeams(current), teams)) return undefined;
          const status = isObject(current['status']) ? current['status'] : {};
          return { ...status, teams };
        },
        TEAM_STATUS_MANAGER,
      );
    } catch (err) {
      if (isApiError(err) && err.code === 404) return;
      logger?.warn('could not update the teams of a user; retrying', {
        user: name,
        error: err instanceof Error ? err.message : String(err),
      });
      setTimeout(() => this.enqueue([name]), RETRY_DELAY_MS).unref();
    }
  }
}
