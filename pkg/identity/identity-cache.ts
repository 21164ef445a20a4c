// In-memory copies of the objects that decide who a caller is and what they may
// do: Users, Teams, OwnedAccessKeys (by name and by key hash), and the owner and
// access rules of every other kind that carries them (SharedSecrets, ...). Each
// collection is fed by its own list and watch, so a change to a key, a user or a
// team takes effect on the next request on every replica, without a storage
// round trip per request.
//
// Readers get the stored objects themselves: they must not modify them.

import type { Logger } from '../util/log/index.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import type { Storage } from '../storage/interfaces.js';
import { Informer, type InformerHandler } from './informer.js';
import { specString, specStrings, TeamIndex, UserGroupIndex } from './membership.js';
import { settlesWithin } from '../util/within.js';

export const USERS = 'users';
export const TEAMS = 'teams';
export const ACCESS_KEYS = 'ownedaccesskeys';

/** One access rule as the authorizer reads it: lists of non-empty strings. */
export interface AccessGrant {
  readonly verbs: readonly string[];
  readonly subresources: readonly string[];
  readonly users: readonly string[];
  readonly teams: readonly string[];
}

/** Who owns an object and who else may do what with it. */
export interface AccessHolder {
  readonly ownerUser: string;
  readonly ownerTeam: string;
  readonly access: readonly AccessGrant[];
}

export interface IdentityChange {
  readonly resource: string;
  /** 'replace' after a (re)list: anything in the collection may have changed. */
  readonly type: 'upsert' | 'remove' | 'replace';
  readonly obj?: KubeObject;
  /** The version the cache held before an upsert or remove. */
  readonly old?: KubeObject;
}

export interface IdentityCacheOptions {
  readonly storage: Storage;
  /** Collection prefixes (ending with "/") of the three identity kinds. */
  readonly users: string;
  readonly teams: string;
  readonly accessKeys: string;
  /** Other collections whose objects carry `spec.owner` and `spec.access`. */
  readonly accessHolders?: readonly { readonly resource: string; readonly prefix: string }[];
  readonly logger?: Logger;
  readonly maxRetryDelayMs?: number;
}

/** The stored hash of a key object (`sha256:<hex>`), or '' when it has none. */
export function storedKeyHash(obj: KubeObject): string {
  return specString(obj, 'key');
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}

/** The owner and access rules of an object, tolerating any shape. */
export function accessHolderOf(obj: KubeObject): AccessHolder {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  const owner = isObject(spec['owner']) ? spec['owner'] : {};
  const rules = Array.isArray(spec['access']) ? spec['access'] : [];
  return {
    ownerUser: typeof owner['user'] === 'string' ? owner['user'] : '',
    ownerTeam: typeof owner['team'] === 'string' ? owner['team'] : '',
    access: rules.filter(isObject).map((r) => ({
      verbs: strings(r['verbs']),
      subresources: strings(r['subresources']),
      users: strings(r['users']),
      teams: strings(r['teams']),
    })),
  };
}

function holderKey(resource: string, namespace: string, name: string): string {
  return `${resource}\u0000${namespace}\u0000${name}`;
}

export class IdentityCache {
  private readonly users = new Map<string, KubeObject>();
  private readonly teams = new Map<string, KubeObject>();
  private readonly keysByName = new Map<string, KubeObject>();
  private readonly keysByHash = new Map<string, KubeObject>();
  private readonly holders = new Map<string, AccessHolder>();
  /** The resources of options.accessHolders (asked on every authorization). */
  private readonly holderResources: ReadonlySet<string>;
  private readonly teamIndex = new TeamIndex();
  private readonly userGroups = new UserGroupIndex();
  private readonly informers: Informer[] = [];
  private readonly listeners = new Set<(change: IdentityChange) => void>();
  private readonly waiters = new Set<() => void>();
  private changeCount = 0;
  private membershipChangeCount = 0;

  constructor(private readonly options: IdentityCacheOptions) {
    const { storage, logger, maxRetryDelayMs } = options;
    const add = (name: string, prefix: string, handler: InformerHandler): void => {
      this.informers.push(
        new Informer({
          storage,
          prefix,
          handler,
          name,
          ...(logger ? { logger } : {}),
          ...(maxRetryDelayMs !== undefined ? { maxRetryDelayMs } : {}),
        }),
      );
    };
    add(USERS, options.users, this.handlerFor(USERS));
    add(TEAMS, options.teams, this.handlerFor(TEAMS));
    add(ACCESS_KEYS, options.accessKeys, this.handlerFor(ACCESS_KEYS));
    for (const { resource, prefix } of options.accessHolders ?? []) {
      add(resource, prefix, this.handlerFor(resource));
    }
    this.holderResources = new Set((options.accessHolders ?? []).map((holder) => holder.resource));
  }

  /** Starts every list and watch; idempotent. */
  start(): void {
    for (const informer of this.informers) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  /** True once every collection has been listed once. */
  get hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  /** Why a collection not listed yet failed its last attempt (a storage error: names a key, never a value). */
  get syncError(): string | undefined {
    return this.informers.find((i) => !i.hasSynced && i.lastError !== undefined)?.lastError;
  }

  async waitForSync(timeoutMs: number): Promise<boolean> {
    const results = await Promise.all(this.informers.map((i) => i.waitForSync(timeoutMs)));
    return results.every(Boolean);
  }

  /**
   * Resolves true once `ready()` holds (checked after every change), false after
   * `timeoutMs`. A write made through the registry reaches the cache only through
   * the watch; a caller handing out a key it just made must know it works.
   */
  async waitFor(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return true;
    let check!: () => void;
    const arrived = new Promise<void>((resolve) => {
      check = () => {
        if (ready()) resolve();
      };
    });
    this.waiters.add(check);
    try {
      return await settlesWithin(arrived, timeoutMs);
    } finally {
      this.waiters.delete(check);
    }
  }

  /** Resolves true once a key with this stored hash is known (false after `timeoutMs`). */
  waitForKey(hash: string, timeoutMs: number): Promise<boolean> {
    return this.waitFor(() => this.keysByHash.has(hash), timeoutMs);
  }

  /** Called after every change, in order; returns the unsubscribe function. */
  subscribe(listener: (change: IdentityChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Counts changes: anything derived from the cache is stale once this moves. */
  get version(): number {
    return this.changeCount;
  }

  /**
   * Counts changes of Users and Teams only: who someone is and which teams they are
   * in (not keys, which change with every recorded activity) is stale once this moves.
   */
  get membershipVersion(): number {
    return this.membershipChangeCount;
  }

  user(name: string): KubeObject | undefined {
    return this.users.get(name);
  }

  team(name: string): KubeObject | undefined {
    return this.teams.get(name);
  }

  allUserNames(): string[] {
    return [...this.users.keys()];
  }

  /** Every Team (for indexes rebuilt after a relist; never on a request path). */
  allTeams(): IterableIterator<KubeObject> {
    return this.teams.values();
  }

  accessKey(name: string): KubeObject | undefined {
    return this.keysByName.get(name);
  }

  /** The key object whose stored hash is `hash`. */
  accessKeyByHash(hash: string): KubeObject | undefined {
    return this.keysByHash.get(hash);
  }

  /**
   * The teams a user belongs to: named in a team's users, or holding one of its
   * groups. `extraGroups` are the groups of the request (such as the key's);
   * the User's own `spec.groups` always count.
   */
  teamsOfUser(name: string, extraGroups: Iterable<string> = []): string[] {
    const groups = new Set(extraGroups);
    for (const g of specStrings(this.users.get(name), 'groups')) groups.add(g);
    return this.teamIndex.teamsOf(name, groups);
  }

  /** Users whose own `spec.groups` hold `group`. */
  usersInGroup(group: string): ReadonlySet<string> {
    return this.userGroups.usersInGroup(group);
  }

  /**
   * Whether objects of `resource` carry an owner and access rules the cache keeps:
   * Users, Teams, and the kinds it was given as access holders (the kinds whose
   * definition says they have access rules). Keys and the resources nobody stores
   * have none: their rights are decided elsewhere.
   */
  carriesAccessRules(resource: string): boolean {
    return resource === USERS || resource === TEAMS || this.holderResources.has(resource);
  }

  /** Owner and access rules of an object, when the cache holds it. */
  accessHolder(resource: string, namespace: string, name: string): AccessHolder | undefined {
    if (resource === USERS) return this.holderFrom(this.users.get(name));
    if (resource === TEAMS) return this.holderFrom(this.teams.get(name));
    return this.holders.get(holderKey(resource, namespace, name));
  }

  private holderFrom(obj: KubeObject | undefined): AccessHolder | undefined {
    return obj ? accessHolderOf(obj) : undefined;
  }

  private handlerFor(resource: string): InformerHandler {
    return {
      replace: (items) => {
        this.clear(resource);
        for (const obj of items) this.put(resource, obj);
        this.changed({ resource, type: 'replace' });
      },
      upsert: (obj) => {
        const old = this.put(resource, obj);
        this.changed({ resource, type: 'upsert', obj, ...(old ? { old } : {}) });
      },
      remove: (obj) => {
        const old = this.drop(resource, obj);
        this.changed({ resource, type: 'remove', obj, ...(old ? { old } : {}) });
      },
    };
  }

  private clear(resource: string): void {
    switch (resource) {
      case USERS:
        this.users.clear();
        this.userGroups.clear();
        return;
      case TEAMS:
        this.teams.clear();
        this.teamIndex.clear();
        return;
      case ACCESS_KEYS:
        this.keysByName.clear();
        this.keysByHash.clear();
        return;
      default:
        for (const key of this.holders.keys()) {
          if (key.startsWith(resource + '\u0000')) this.holders.delete(key);
        }
    }
  }

  /** Stores `obj`; returns what it replaced. */
  private put(resource: string, obj: KubeObject): KubeObject | undefined {
    const name = obj.metadata.name ?? '';
    switch (resource) {
      case USERS: {
        const old = this.users.get(name);
        this.users.set(name, obj);
        this.userGroups.set(obj);
        return old;
      }
      case TEAMS: {
        const old = this.teams.get(name);
        this.teams.set(name, obj);
        this.teamIndex.set(obj);
        return old;
      }
      case ACCESS_KEYS: {
        const old = this.keysByName.get(name);
        // A rotated key: the old hash must stop working at once.
        if (old) this.dropHash(old);
        this.keysByName.set(name, obj);
        const hash = storedKeyHash(obj);
        if (hash) this.keysByHash.set(hash, obj);
        return old;
      }
      default:
        this.holders.set(holderKey(resource, obj.metadata.namespace ?? '', name), accessHolderOf(obj));
        return undefined;
    }
  }

  private drop(resource: string, obj: KubeObject): KubeObject | undefined {
    const name = obj.metadata.name ?? '';
    switch (resource) {
      case USERS: {
        const old = this.users.get(name);
        this.users.delete(name);
        this.userGroups.delete(name);
        return old;
      }
      case TEAMS: {
        const old = this.teams.get(name);
        this.teams.delete(name);
        this.teamIndex.delete(name);
        return old;
      }
      case ACCESS_KEYS: {
        const old = this.keysByName.get(name);
        if (old) this.dropHash(old);
        this.dropHash(obj);
        this.keysByName.delete(name);
        return old;
      }
      default:
        this.holders.delete(holderKey(resource, obj.metadata.namespace ?? '', name));
        return undefined;
    }
  }

  /** Forgets a key object's hash, unless another key object now holds it. */
  private dropHash(obj: KubeObject): void {
    const hash = storedKeyHash(obj);
    if (hash && this.keysByHash.get(hash)?.metadata.name === obj.metadata.name) this.keysByHash.delete(hash);
  }

  private changed(change: IdentityChange): void {
    this.changeCount++;
    if (change.resource === USERS || change.resource === TEAMS) this.membershipChangeCount++;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.options.logger?.error('identity cache listener failed', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    for (const check of this.waiters) check();
  }
}
