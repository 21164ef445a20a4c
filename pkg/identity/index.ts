// The identity machinery a server runs: the cache of users, teams and keys, the
// User.status.teams controller and the lastActivity writer, started and stopped
// together.

import type { Logger } from '../util/log/index.js';
import type { Storage } from '../storage/interfaces.js';
import { AccessKeyActivity } from './activity.js';
import { ACCESS_KEYS, IdentityCache, TEAMS, USERS } from './identity-cache.js';
import { specString } from './membership.js';
import { lateStatusWriter, type StatusWriter } from './status-writer.js';
import { TeamStatusController } from './team-status.js';

export { AccessKeyActivity, DEFAULT_ACTIVITY_INTERVAL_MS } from './activity.js';
export { IdentityCache, accessHolderOf, storedKeyHash } from './identity-cache.js';
export type { AccessGrant, AccessHolder, IdentityChange } from './identity-cache.js';
export { TeamIndex, UserGroupIndex, specString, specStrings } from './membership.js';
export { TeamStatusController } from './team-status.js';
export { ACCESS_KEY_ACTIVITY_MANAGER, TEAM_STATUS_MANAGER, type StatusWriter } from './status-writer.js';
export { keyTokenGeneration, userTokenGeneration } from './token-generation.js';

export interface IdentityServicesOptions {
  readonly storage: Storage;
  /** The storage prefix of a collection (ending with "/"). */
  readonly collectionPrefix: (resource: string) => string;
  /** Other kinds whose owner and access rules the authorizer reads. */
  readonly accessHolderResources?: readonly string[];
  /** --access-key-activity-interval. */
  readonly activityIntervalMs?: number;
  /** The status subresource of `users` and `ownedaccesskeys` (their Stores), looked up when a write happens. */
  readonly statusWriterOf: (resource: string) => StatusWriter | undefined;
  readonly logger?: Logger;
}

export class IdentityServices {
  readonly cache: IdentityCache;
  readonly activity: AccessKeyActivity;
  readonly teamStatus: TeamStatusController;

  constructor(options: IdentityServicesOptions) {
    const { storage, collectionPrefix, logger } = options;
    this.cache = new IdentityCache({
      storage,
      users: collectionPrefix(USERS),
      teams: collectionPrefix(TEAMS),
      accessKeys: collectionPrefix(ACCESS_KEYS),
      accessHolders: (options.accessHolderResources ?? []).map((resource) => ({
        resource,
        prefix: collectionPrefix(resource),
      })),
      ...(logger ? { logger } : {}),
    });
    this.activity = new AccessKeyActivity({
      writer: lateStatusWriter(ACCESS_KEYS, options.statusWriterOf),
      ...(options.activityIntervalMs !== undefined ? { intervalMs: options.activityIntervalMs } : {}),
      ...(logger ? { logger } : {}),
    });
    this.teamStatus = new TeamStatusController({
      cache: this.cache,
      writer: lateStatusWriter(USERS, options.statusWriterOf),
      ...(logger ? { logger } : {}),
    });
  }

  start(): void {
    this.cache.start();
    this.teamStatus.start();
  }

  /** Stops writing and watching; call before storage closes. */
  async stop(): Promise<void> {
    await this.teamStatus.stop();
    await this.activity.stop();
    await this.cache.stop();
  }

  get hasSynced(): boolean {
    return this.cache.hasSynced;
  }

  get syncError(): string | undefined {
    return this.cache.syncError;
  }

  /**
   * Resolves true once a key with this stored hash, and the User or Team it
   * belongs to, are in the cache: only then does the key authenticate.
   */
  waitForKey(hash: string, timeoutMs: number): Promise<boolean> {
    const cache = this.cache;
    return cache.waitFor(() => {
      const key = cache.accessKeyByHash(hash);
      if (!key) return false;
      const user = specString(key, 'user');
      const team = specString(key, 'team');
      if (user) return cache.user(user) !== undefined;
      if (team) return cache.team(team) !== undefined;
      return true;
    }, timeoutMs);
  }
}
