// Whether an OwnedAccessKey may authenticate right now: the one rule shared by the
// access-key authenticator (the key presented itself) and the direct cluster
// endpoint token authenticator (a token minted with the key), so that a token is
// never good for longer than its key. Both read keys, users and teams from the same
// watch-fed identity cache, so a revocation reaches every replica within the same
// bound for the key and for every token it minted.
//
// Each AccessKeyCheck is a small function that throws an AccessKeyRefusal, a 401 that
// says what failed and what to do, in two parts so that a credential made with the
// key says the same in its own sentence (credentialRefusal); a key that passes them
// all is usable.
//
// A key whose owner is gone by uid (deleted or being deleted, or deleted and
// re-created under the same name: the key belongs to a former owner of its owner's
// name) gets one answer, whichever of those is the case: the user (or team) the key
// was made for no longer exists. That is true of the key's owner by uid in every one
// of them, and it tells the key's holder nothing about the name: an answer that
// changed when a User or Team of the name is created again would tell whoever kept
// the key that it was. Not upstream's bare "Unauthorized" in every case either: the
// holder of a key whose user was deleted was always told so and what to do, and that
// answer stays true. Which former owner it was goes to the server's log, by the key's
// name only (as kube-apiserver logs why it could not authenticate a request), at most
// once a minute per key and reason (LogThrottle), with the count of the refusals left
// out.

import { ApiError, newUnauthorized } from '../apis/meta/errors.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import {
  keyAdoptedFromFormerUser,
  keyPredatesOwner,
  UNKNOWN_FORMER_OWNER,
} from '../apis/management/v1/owned-access-key.js';
import type { Logger } from '../util/log/index.js';
import { LogThrottle, type LogAdmission } from '../util/log/throttle.js';
import { accessKeyDigest } from './access-key-digest.js';
import { storedLastActivity } from '../identity/activity.js';
import { keyTokenGeneration, userTokenGeneration } from '../identity/token-generation.js';

/** What the authenticators read: the identity cache, or a test's stand-in. */
export interface AccessKeySource {
  readonly hasSynced: boolean;
  waitForSync(timeoutMs: number): Promise<boolean>;
  accessKeyByHash(hash: string): KubeObject | undefined;
  /** The key of that name (tokens name the key they were minted with). */
  accessKey(name: string): KubeObject | undefined;
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
  /** The annotation holding the uid of the owner an orphaning delete took from the key. */
  readonly formerOwnerAnnotation: string;
  /** The annotation holding the key's revision: keys stored before it existed are judged by their age. */
  readonly revisionAnnotation: string;
  /** Where the former owner a key was refused for is logged (refuseKeyOfGoneOwner). */
  readonly logger?: Logger;
  /** How often that line is written per key (one a minute; AccessKeyUsability holds one). */
  readonly logThrottle?: LogThrottle;
}

/**
 * A key's 401: `why`, a clause that names what failed ("the access key \"k\" is
 * disabled"), and `remedy`, what to do ("use another key"). The key's own message is
 * `why; remedy` unless given (the expiry's has the spec's wording); a credential made
 * with the key says `<credential> no longer works because why; remedy`.
 */
export class AccessKeyRefusal extends ApiError {
  constructor(
    readonly why: string,
    readonly remedy: string,
    message = `${why}; ${remedy}`,
  ) {
    super(401, 'Unauthorized', message);
  }
}

/**
 * The 401 of a credential made with a key (a direct cluster endpoint token, a kube
 * config's client certificate: `credential` names it, "this client certificate")
 * when the key check threw `err`, as one sentence; any other error as it is.
 */
export function credentialRefusal(credential: string, err: unknown): unknown {
  if (!(err instanceof AccessKeyRefusal)) return err;
  return newUnauthorized(`${credential} no longer works because ${err.why}; ${err.remedy}`);
}

/** Throws an AccessKeyRefusal when the key must not authenticate; returns when it may. */
export type AccessKeyCheck = (key: KubeObject, ctx: CheckContext) => void;

export const EXPIRED_MESSAGE = 'access key expired, please log in again';

function keyName(key: KubeObject): string {
  return key.metadata.name ?? '';
}

export function specOf(key: KubeObject): Record<string, unknown> {
  return isObject(key['spec']) ? key['spec'] : {};
}

/** `spec.disabled: true` keys exist but authenticate nothing. */
export const rejectDisabledKey: AccessKeyCheck = (key) => {
  if (specOf(key)['disabled'] === true) {
    throw new AccessKeyRefusal(
      `the access key "${keyName(key)}" is disabled`,
      'ask an administrator to enable it or use another key',
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
  if (expiry !== undefined && ctx.now >= expiry) {
    throw new AccessKeyRefusal(
      `the access key "${keyName(key)}" expired`,
      'please log in again',
      EXPIRED_MESSAGE,
    );
  }
};

/**
 * The key's owner must be able to log in: a user key needs its User, enabled and
 * with no tokenGeneration newer than the key's; a team key needs its Team; either
 * the very object it was made for (by uid: refuseKeyOfGoneOwner). A subject key is
 * checked against the User of that name when there is one, since rules that name
 * users apply to it too.
 */
export const rejectKeyOfUnusableOwner: AccessKeyCheck = (key, ctx) => {
  const spec = specOf(key);
  const team = typeof spec['team'] === 'string' ? spec['team'] : '';
  const userName = typeof spec['user'] === 'string' ? spec['user'] : '';
  const subject = typeof spec['subject'] === 'string' ? spec['subject'] : '';
  if (!userName && team) {
    refuseKeyOfGoneOwner(key, 'Team', team, ctx.source.team(team), ctx);
    return;
  }
  const name = userName || subject;
  if (!name) return;
  const user = ctx.source.user(name);
  if (userName) refuseKeyOfGoneOwner(key, 'User', name, user, ctx);
  if (!user) return;
  if (specOf(user)['disabled'] === true) {
    throw new AccessKeyRefusal(`the user "${name}" is disabled`, 'ask an administrator to enable the user');
  }
  if (userTokenGeneration(user) > keyTokenGeneration(key, ctx.generationAnnotation)) {
    throw new AccessKeyRefusal(
      `the access key "${keyName(key)}" was revoked: the tokens of user "${name}" were invalidated`,
      'please log in again',
    );
  }
};

/**
 * Refuses a key whose owner (`owner`, the User or Team of the key's owner name, if
 * any) is not the one it was made for, or is being deleted. Two answers, told apart by
 * the key alone, never by whether an owner of the name exists (see the file comment):
 *   - the key would be adopted by an owner created now (it names none, by reference or
 *     record, and is not older than one created now: awaitingOwner): "does not exist",
 *     and creating the owner is the remedy, as for a key Helm applied before its User;
 *   - otherwise its owner by uid is gone, whether or not another of the name exists:
 *     "the user the key was made for no longer exists", and a former owner's key (the
 *     name's owner exists, and is another: formerOwnersKeyReason) has the reason logged.
 */
function refuseKeyOfGoneOwner(
  key: KubeObject,
  kind: 'User' | 'Team',
  name: string,
  owner: KubeObject | undefined,
  ctx: CheckContext,
): void {
  const noun = kind === 'User' ? 'user' : 'team';
  if (owner) {
    const reason = formerOwnersKeyReason(key, kind, owner, ctx);
    if (reason !== undefined) logFormerOwnersKey(key, reason, ctx);
    else if (!owner.metadata.deletionTimestamp) return;
  }
  // Asked whether or not an owner of the name exists or is being deleted, so that the
  // answer for a key awaiting its owner is the same while the owner goes as once gone.
  if (awaitingOwner(key, kind, name, ctx)) {
    throw new AccessKeyRefusal(
      `the ${noun} "${name}" of the access key "${keyName(key)}" does not exist`,
      kind === 'User' ? 'ask an administrator to create the user or use another key' : 'use another key',
    );
  }
  throw new AccessKeyRefusal(
    `the ${noun} "${name}" the access key "${keyName(key)}" was made for no longer exists`,
    `use another key (a ${noun} created again with that name does not inherit it)`,
  );
}

/**
 * Whether an owner of the key's owner name created now would own the key: the same
 * rule (formerOwnersKeyReason) asked of that owner, with no uid (the key references
 * or records none it could be) and created now (in whole seconds, as the server
 * stamps it). So the key of a deleted owner, even one stored before keys recorded
 * their owner, is never said to be waiting for one.
 */
function awaitingOwner(key: KubeObject, kind: 'User' | 'Team', name: string, ctx: CheckContext): boolean {
  const createdNow = new Date(Math.floor(ctx.now / 1000) * 1000).toISOString();
  const owner: KubeObject = { apiVersion: '', kind, metadata: { name, creationTimestamp: createdNow } };
  return formerOwnersKeyReason(key, kind, owner, ctx) === undefined;
}

/**
 * Why the key belongs to a former owner of its owner's name, if it does: the owner is
 * another object than the one the key's ownerReference names (deleted and re-created
 * under the same name), or than the one an orphaning delete took from the key (the
 * reference is gone then, the annotation remembers its uid, or `unknown` when the
 * key was found older than its owner), or the key, referencing no owner, is older
 * than its owner (made for a former one of that name: keyPredatesOwner; the start-up
 * migration records it as the annotation too), or the key, referencing its User, was
 * made while a former User of the name existed and adopted by this one before
 * adoptions were refused (keyAdoptedFromFormerUser; recorded likewise). Asked whether
 * or not the owner is being deleted: such a key belongs to an owner that is gone
 * either way.
 */
export function formerOwnersKeyReason(
  key: KubeObject,
  kind: 'User' | 'Team',
  owner: KubeObject,
  ctx: Pick<CheckContext, 'formerOwnerAnnotation' | 'revisionAnnotation' | 'generationAnnotation'>,
): string | undefined {
  const former = key.metadata.annotations?.[ctx.formerOwnerAnnotation];
  if (former !== undefined && former !== owner.metadata.uid) {
    return former === UNKNOWN_FORMER_OWNER
      ? `recorded as older than its ${kind} (made for a former ${kind} of that name)`
      : `orphaned from a former ${kind} of that name (uid ${former})`;
  }
  const ref = (key.metadata.ownerReferences ?? []).find(
    (r) => r.kind === kind && r.name === owner.metadata.name,
  );
  if (ref !== undefined) {
    if (ref.uid !== owner.metadata.uid) {
      return `made for a former ${kind} of that name (its reference names uid ${ref.uid})`;
    }
    return former === undefined && kind === 'User' && adoptedFromFormerUser(key, owner, ctx)
      ? 'made for a former User of that name while it existed, then adopted by this one (older than it)'
      : undefined;
  }
  return keyPredatesOwner(key, owner, ctx.revisionAnnotation)
    ? `older than its ${kind} and stored before keys carried a revision (made for a former ${kind} of that name)`
    : undefined;
}

/**
 * keyAdoptedFromFormerUser's answers, by the key object and its owner object: the
 * cache replaces either object on any change (never changes one in place), so an
 * answer holds for as long as both are the ones it was worked out for. A key stored
 * before keys had a revision would otherwise pay two Date.parse per request.
 */
const adoptions = new WeakMap<KubeObject, { readonly owner: KubeObject; readonly adopted: boolean }>();

function adoptedFromFormerUser(
  key: KubeObject,
  owner: KubeObject,
  ctx: Pick<CheckContext, 'revisionAnnotation' | 'generationAnnotation'>,
): boolean {
  // Every key stored since keys carry a revision: answered without the memo.
  if (key.metadata.annotations?.[ctx.revisionAnnotation] !== undefined) return false;
  const known = adoptions.get(key);
  if (known?.owner === owner) return known.adopted;
  const adopted = keyAdoptedFromFormerUser(key, owner, ctx.revisionAnnotation, ctx.generationAnnotation);
  adoptions.set(key, { owner, adopted });
  return adopted;
}

/**
 * Logs why a key was refused as a former owner's, by the key's name, at most once a
 * minute per key and reason (ctx.logThrottle), with how many refusals were left out
 * since: a client retrying such a key in a loop would otherwise write a line per
 * request.
 */
const NOTHING_LEFT_OUT: LogAdmission = { suppressed: 0, forgotten: 0 };

function logFormerOwnersKey(key: KubeObject, reason: string, ctx: CheckContext): void {
  if (!ctx.logger) return;
  // By key and reason: a reason that changed (the key re-adopted, its owner re-created
  // again) is news to the administrator; a key has only a few.
  const admitted = ctx.logThrottle ? ctx.logThrottle.admit(`${keyName(key)}\n${reason}`, ctx.now) : NOTHING_LEFT_OUT;
  if (admitted === undefined) return;
  const { suppressed, forgotten } = admitted;
  ctx.logger.warn("access key refused: it belongs to a former owner of its owner's name", {
    accessKey: keyName(key),
    reason,
    ...(suppressed > 0 ? { suppressed } : {}),
    // Refusals of other keys whose windows the throttle forgot (its cap) before their
    // next line: counted here so the log's counts add up, by number only.
    ...(forgotten > 0 ? { suppressedOfForgottenKeys: forgotten } : {}),
  });
}

export const DEFAULT_ACCESS_KEY_CHECKS: readonly AccessKeyCheck[] = [
  rejectDisabledKey,
  rejectExpiredKey,
  rejectKeyOfUnusableOwner,
];

/**
 * How long a request that arrives before the identity cache's first list waits for
 * it before its 503. Short: it only covers the start-up race of a request arriving a
 * moment before the list completes (the list usually takes milliseconds). Past it the
 * server is not ready, which /readyz says (its identity-cache check) and which the
 * kubelet and the host's aggregator act on; holding a caller for longer would only
 * turn into a hang behind a cache that cannot load (storage down, a wrong encryption
 * key).
 */
export const IDENTITY_SYNC_WAIT_MS = 1_000;

/**
 * The Retry-After of a request refused because the cache has not loaded, as
 * k8s.io/apiserver's watch cache computes it for a request it refuses while not
 * ready (cacher's calculateRetryAfterForUnreadyCache): e^(0.06 × seconds not
 * ready), at least 1 and at most 30, whole seconds. One second at start-up; a cache
 * that stays unloaded for minutes slows its callers' retries down.
 */
export function retryAfterForUnreadyCache(notReadyMs: number): number {
  return Math.trunc(Math.min(30, Math.max(1, Math.exp((0.06 * notReadyMs) / 1000))));
}

export const IDENTITY_NOT_READY_MESSAGE = 'the access key index is not ready yet, please try again';

export interface AccessKeyUsabilityOptions {
  readonly checks?: readonly AccessKeyCheck[];
  /** How long a request waits for the cache's first sync before a 503 (default IDENTITY_SYNC_WAIT_MS). */
  readonly syncTimeoutMs?: number;
  readonly use?: AccessKeyUse;
  readonly now?: () => number;
  /** The annotation holding the key's tokenGeneration (tokenGenerationAnnotation(group)). */
  readonly generationAnnotation: string;
  /** The annotation holding the key's lost owner (formerOwnerAnnotation(group)). */
  readonly formerOwnerAnnotation: string;
  /** The annotation holding the key's revision (keyRevisionAnnotation(group)), for accessKeyDigest. */
  readonly revisionAnnotation: string;
  /** Where the former owner a key was refused for is logged (logFormerOwnersKey). */
  readonly logger?: Logger;
}

/** The checks of a key, as one object both authenticators hold (see the file comment). */
export class AccessKeyUsability {
  private readonly checks: readonly AccessKeyCheck[];
  private readonly syncTimeoutMs: number;
  private readonly now: () => number;
  /** When the cache began loading (it is built with the server): how long it has not been ready. */
  private readonly loadingSince: number;
  /** One former-owner line per key per minute, across both authenticators (they share this object). */
  private readonly logThrottle = new LogThrottle();

  constructor(
    readonly source: AccessKeySource,
    private readonly options: AccessKeyUsabilityOptions,
  ) {
    this.checks = options.checks ?? DEFAULT_ACCESS_KEY_CHECKS;
    this.syncTimeoutMs = options.syncTimeoutMs ?? IDENTITY_SYNC_WAIT_MS;
    this.now = options.now ?? Date.now;
    this.loadingSince = this.now();
  }

  /**
   * Resolves once the cache has listed everything; after a short wait, a 503 with
   * Retry-After. Saying 401 would tell a valid caller their credential is wrong; it
   * is the server that is not ready. The status is kube-apiserver's for a request
   * that comes before it is ready to route it (the not-found handler's "please try
   * again" 503 before its paths are installed), the delay its watch cache's; client-go
   * and kubectl retry either on their own after Retry-After.
   */
  async whenSynced(): Promise<void> {
    if (this.source.hasSynced || (await this.source.waitForSync(this.syncTimeoutMs))) return;
    throw new ApiError(503, 'ServiceUnavailable', IDENTITY_NOT_READY_MESSAGE, {
      retryAfterSeconds: retryAfterForUnreadyCache(this.now() - this.loadingSince),
    });
  }

  /** Throws the first check's AccessKeyRefusal; returns when the key may authenticate now. */
  check(key: KubeObject): void {
    const ctx: CheckContext = {
      source: this.source,
      now: this.now(),
      generationAnnotation: this.options.generationAnnotation,
      formerOwnerAnnotation: this.options.formerOwnerAnnotation,
      revisionAnnotation: this.options.revisionAnnotation,
      ...(this.options.use ? { use: this.options.use } : {}),
      ...(this.options.logger ? { logger: this.options.logger, logThrottle: this.logThrottle } : {}),
    };
    for (const check of this.checks) check(key, ctx);
  }

  /** The annotation holding a key's revision (keyRevisionAnnotation(group)). */
  get revisionAnnotation(): string {
    return this.options.revisionAnnotation;
  }

  /** Which value of the key this is, as tokens and certificates made with it record it. */
  digest(key: KubeObject): string {
    return accessKeyDigest(key, this.options.revisionAnnotation);
  }

  /** Notes a use of the key itself (not of a token it minted: that is no activity of the key). */
  recordUse(key: KubeObject): void {
    this.options.use?.record(key);
  }
}
