// Access keys as bearer tokens. The presented key is hashed (stored keys hold only
// `sha256:<hex>`), looked up by that hash in the identity cache (an index fed by
// watches, not a scan) and compared in constant time. A match is then checked by
// each AccessKeyCheck in turn: each is a small function that throws a 401 ApiError
// whose message tells the person what to do. Nothing here ever logs a key.
//
// Identity of a key (AuthenticatedUser):
//   spec.user:    name = the user's name; groups += the User's spec.groups
//   spec.team:    name = "team:<team>" (no User can be called that: object names
//                 cannot contain ':'), plus group "team:<team>"
//   spec.subject: name = the subject as given
// groups += spec.groups and "system:authenticated"; accessKeyName, accessKeyType
// and scope come from the key.

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { newServiceUnavailable, newUnauthorized } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import { hashAccessKey } from '../apis/management/v1/owned-access-key.js';
import { storedKeyHash } from '../identity/identity-cache.js';
import { accessKeyAuthentications } from '../metrics/platform.js';
import { specString, specStrings } from '../identity/membership.js';
import { keyTokenGeneration, userTokenGeneration } from '../identity/token-generation.js';
import { storedLastActivity } from '../identity/activity.js';
import { bearerToken } from './bearer-token.js';
import type { AuthenticatedUser, Authenticator } from './interfaces.js';

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const TEAM_PREFIX = 'team:';

/** What the authenticator reads: the identity cache, or a test's stand-in. */
export interface AccessKeySource {
  readonly hasSynced: boolean;
  waitForSync(timeoutMs: number): Promise<boolean>;
  accessKeyByHash(hash: string): KubeObject | undefined;
  user(name: string): KubeObject | undefined;
  team(name: string): KubeObject | undefined;
}

/** Where a successful use of a key is noted (status.lastActivity). */
export interface AccessKeyUse {
  record(key: KubeObject): void;
  /** The last use this replica saw (ms since the epoch). */
  lastUse(name: string): number | undefined;
}

export interface CheckContext {
  readonly source: AccessKeySource;
  /** Now, in ms since the epoch. */
  readonly now: number;
  readonly use?: AccessKeyUse;
  /** The annotation holding the tokenGeneration the key was made under. */
  readonly generationAnnotation: string;
}

/** Throws a 401 ApiError when the key must not authenticate; returns when it may. */
export type AccessKeyCheck = (key: KubeObject, ctx: CheckContext) => void;

export const EXPIRED_MESSAGE = 'access key expired, please log in again';

function keyName(key: KubeObject): string {
  return key.metadata.name ?? '';
}

function specOf(key: KubeObject): Record<string, unknown> {
  return isObject(key['spec']) ? key['spec'] : {};
}

/** `spec.disabled: true` keys exist but authenticate nothing. */
export const rejectDisabledKey: AccessKeyCheck = (key) => {
  if (specOf(key)['disabled'] === true) {
    throw newUnauthorized(
      `the access key "${keyName(key)}" is disabled; ask an administrator to enable it or use another key`,
    );
  }
};

/** When the key stops working (ms since the epoch), or undefined when it never does. */
export function accessKeyExpiry(key: KubeObject, lastUse?: number): number | undefined {
  const spec = specOf(key);
  const ttl = spec['ttl'];
  if (typeof ttl !== 'number' || ttl <= 0) return undefined;
  const created = Date.parse(key.metadata.creationTimestamp ?? '');
  // A ttl with no start to count from: treat the key as already expired.
  let start = Number.isNaN(created) ? -Infinity : created;
  if (spec['ttlAfterLastActivity'] === true) {
    start = Math.max(start, storedLastActivity(key) ?? -Infinity, lastUse ?? -Infinity);
  }
  return start + ttl * 1000;
}

/** `spec.ttl` seconds after creation, or after the last activity with ttlAfterLastActivity. */
export const rejectExpiredKey: AccessKeyCheck = (key, ctx) => {
  const expiry = accessKeyExpiry(key, ctx.use?.lastUse(keyName(key)));
  if (expiry !== undefined && ctx.now >= expiry) throw newUnauthorized(EXPIRED_MESSAGE);
};

/**
 * The key's owner must be able to log in: a user key needs its User, enabled and
 * with no tokenGeneration newer than the key's; a team key needs its Team. A
 * subject key is checked against the User of that name when there is one, since
 * rules that name users apply to it too.
 */
export const rejectKeyOfUnusableOwner: AccessKeyCheck = (key, ctx) => {
  const spec = specOf(key);
  const team = typeof spec['team'] === 'string' ? spec['team'] : '';
  const userName = typeof spec['user'] === 'string' ? spec['user'] : '';
  const subject = typeof spec['subject'] === 'string' ? spec['subject'] : '';
  if (!userName && team) {
    if (!ctx.source.team(team)) {
      throw newUnauthorized(
        `the team "${team}" of the access key "${keyName(key)}" does not exist; use another key`,
      );
    }
    return;
  }
  const name = userName || subject;
  if (!name) return;
  const user = ctx.source.user(name);
  if (!user) {
    if (!userName) return;
    throw newUnauthorized(
      `the user "${name}" of the access key "${keyName(key)}" does not exist; ask an administrator to create the user or use another key`,
    );
  }
  if (specOf(user)['disabled'] === true) {
    throw newUnauthorized(`the user "${name}" is disabled; ask an administrator to enable the user`);
  }
  if (userTokenGeneration(user) > keyTokenGeneration(key, ctx.generationAnnotation)) {
    throw newUnauthorized(
      `the access key "${keyName(key)}" was revoked: the tokens of user "${name}" were invalidated; please log in again`,
    );
  }
};

export const DEFAULT_ACCESS_KEY_CHECKS: readonly AccessKeyCheck[] = [
  rejectDisabledKey,
  rejectExpiredKey,
  rejectKeyOfUnusableOwner,
];

/** Who a key speaks for, or undefined when it names nobody (such a key cannot authenticate). */
export function accessKeyIdentity(key: KubeObject, source?: AccessKeySource): AuthenticatedUser | undefined {
  const spec = specOf(key);
  const groups: string[] = specStrings(key, 'groups');
  const userName = specString(key, 'user');
  const team = specString(key, 'team');
  const subject = specString(key, 'subject');
  let name: string;
  if (userName) {
    name = userName;
    groups.push(...specStrings(source?.user(userName), 'groups'));
  } else if (team) {
    name = TEAM_PREFIX + team;
    groups.push(name);
  } else if (subject) name = subject;
  else return undefined;
  groups.push(AUTHENTICATED_GROUP);
  const user: {
    name: string;
    groups: string[];
    accessKeyName?: string;
    accessKeyType?: string;
    scope?: AccessKeyScope;
  } = { name, groups: [...new Set(groups)] };
  const keyName = key.metadata.name;
  if (keyName) user.accessKeyName = keyName;
  if (typeof spec['type'] === 'string' && spec['type'] !== '') user.accessKeyType = spec['type'];
  if (isObject(spec['scope'])) user.scope = spec['scope'] as AccessKeyScope;
  return user;
}

export interface AccessKeyAuthenticatorOptions {
  readonly checks?: readonly AccessKeyCheck[];
  /** How long a request waits for the cache's first sync before a 503. */
  readonly syncTimeoutMs?: number;
  readonly use?: AccessKeyUse;
  readonly now?: () => number;
  /** The annotation holding the key's tokenGeneration (tokenGenerationAnnotation(group)). */
  readonly generationAnnotation: string;
  /**
   * Answer "not mine" (null) for a bearer token that is no access key, so the next
   * authenticator of a chain (host TokenReview, signed tokens) may try it.
   * Default false: such a token is a 401.
   */
  readonly passUnknownTokens?: boolean;
}

export class AccessKeyAuthenticator implements Authenticator {
  /**
   * The identity of a key object, while its User object is the same: one
   * AuthenticatedUser per key and not one per request, so what authorization works
   * out about a caller is remembered across requests (CallerResolver's memo).
   */
  private readonly identities = new WeakMap<
    KubeObject,
    { readonly owner: KubeObject | undefined; readonly user: AuthenticatedUser }
  >();
  private readonly checks: readonly AccessKeyCheck[];
  private readonly syncTimeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: AccessKeySource,
    private readonly options: AccessKeyAuthenticatorOptions,
  ) {
    this.checks = options.checks ?? DEFAULT_ACCESS_KEY_CHECKS;
    this.syncTimeoutMs = options.syncTimeoutMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    const token = bearerToken(req);
    if (token === null) return null;
    if (!this.source.hasSynced && !(await this.source.waitForSync(this.syncTimeoutMs))) {
      accessKeyAuthentications.inc({ result: 'unavailable' });
      // Saying 401 here would tell a valid caller their key is wrong; it is the server that is not ready.
      throw newServiceUnavailable('the access key index is not ready yet, please try again');
    }
    const hash = hashAccessKey(token);
    const key = this.source.accessKeyByHash(hash);
    if (!key || !sameHash(hash, storedKeyHash(key))) {
      // A token that may be another authenticator's (passUnknownTokens) is not counted as a failure here.
      if (this.options.passUnknownTokens !== true) accessKeyAuthentications.inc({ result: 'unknown' });
      return this.notAKey();
    }
    const ctx: CheckContext = {
      source: this.source,
      now: this.now(),
      generationAnnotation: this.options.generationAnnotation,
      ...(this.options.use ? { use: this.options.use } : {}),
    };
    let user: AuthenticatedUser | undefined;
    try {
      for (const check of this.checks) check(key, ctx);
      user = this.identityOf(key);
    } catch (err) {
      accessKeyAuthentications.inc({ result: 'rejected' });
      throw err;
    }
    if (!user) {
      accessKeyAuthentications.inc({ result: 'rejected' });
      throw newUnauthorized();
    }
    accessKeyAuthentications.inc({ result: 'success' });
    this.options.use?.record(key);
    return user;
  }

  private identityOf(key: KubeObject): AuthenticatedUser | undefined {
    const userName = specString(key, 'user');
    const owner = userName ? this.source.user(userName) : undefined;
    const known = this.identities.get(key);
    if (known && known.owner === owner) return known.user;
    const user = accessKeyIdentity(key, this.source);
    if (user) this.identities.set(key, { owner, user });
    return user;
  }

  /**
   * A bearer token that is no access key. 401 here, since nothing else reads
   * bearer tokens yet; an authenticator chain that does (host TokenReview, signed
   * tokens) wraps this one with `passUnknownTokens`.
   */
  private notAKey(): null {
    if (this.options.passUnknownTokens === true) return null;
    throw newUnauthorized();
  }
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
