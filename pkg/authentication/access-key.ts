// Access keys as bearer tokens. The presented key is hashed (stored keys hold only
// `sha256:<hex>`), looked up by that hash in the identity cache (an index fed by
// watches, not a scan) and compared in constant time. A match is then checked by
// AccessKeyUsability (access-key-usability.ts), the rule direct cluster endpoint
// tokens minted with the key are held to as well. Nothing here ever logs a key.
//
// Identity of a key (AuthenticatedUser):
//   spec.user:    name = the user's name; groups += the User's spec.groups
//   spec.team:    name = "team:<team>" (no User can be called that: object names
//                 cannot contain ':'), plus group "team:<team>"
//   spec.subject: name = the subject as given
// groups += spec.groups and "system:authenticated"; accessKeyName, accessKeyUid,
// accessKeyDigest, accessKeyType and scope come from the key.

import type { IncomingMessage } from 'node:http';
import { newUnauthorized } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import { hashAccessKey } from '../apis/management/v1/owned-access-key.js';
import { accessKeyDigest } from './access-key-digest.js';
import { storedKeyHash } from '../identity/identity-cache.js';
// Re-exported: callers that read a key's digest have long imported it from here.
export { accessKeyDigest } from './access-key-digest.js';
import type { CounterSeries } from '../metrics/families.js';
import { accessKeyAuthentications, type AccessKeyResult } from '../metrics/platform.js';
import { specString, specStrings } from '../identity/membership.js';
import {
  AccessKeyUsability,
  specOf,
  type AccessKeySource,
  type AccessKeyUsabilityOptions,
} from './access-key-usability.js';
import { bearerToken } from './bearer-token.js';
import type { Authenticator } from './interfaces.js';
import type { Awaitable } from '../util/awaitable.js';
import type { AuthenticatedUser } from './user/user.js';

export {
  accessKeyExpiry,
  AccessKeyUsability,
  DEFAULT_ACCESS_KEY_CHECKS,
  EXPIRED_MESSAGE,
  rejectDisabledKey,
  rejectExpiredKey,
  rejectKeyOfUnusableOwner,
  type AccessKeyCheck,
  type AccessKeySource,
  type AccessKeyUse,
  type AccessKeyUsabilityOptions,
  type CheckContext,
} from './access-key-usability.js';

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const TEAM_PREFIX = 'team:';

/** Who a key speaks for, or undefined when it names nobody (such a key cannot authenticate). */
/** `revisionAnnotation`: keyRevisionAnnotation(group), for the digest a token or certificate made with the key records. */
export function accessKeyIdentity(
  key: KubeObject,
  source: AccessKeySource | undefined,
  revisionAnnotation: string,
): AuthenticatedUser | undefined {
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
    accessKeyUid?: string;
    accessKeyDigest?: string;
    accessKeyType?: string;
    scope?: AccessKeyScope;
  } = { name, groups: [...new Set(groups)] };
  const keyName = key.metadata.name;
  if (keyName) user.accessKeyName = keyName;
  // What a token minted with the key records; every stored key has a uid.
  const keyUid = key.metadata.uid;
  const digest = accessKeyDigest(key, revisionAnnotation);
  if (keyUid && digest) {
    user.accessKeyUid = keyUid;
    user.accessKeyDigest = digest;
  }
  if (typeof spec['type'] === 'string' && spec['type'] !== '') user.accessKeyType = spec['type'];
  if (isObject(spec['scope'])) user.scope = spec['scope'] as AccessKeyScope;
  return user;
}

export interface AccessKeyAuthenticatorOptions extends AccessKeyUsabilityOptions {
  /**
   * Answer "not mine" (null) for a bearer token that is no access key, so the next
   * authenticator of a chain (host TokenReview, signed tokens) may try it.
   * Default false: such a token is a 401.
   */
  readonly passUnknownTokens?: boolean;
}

export class AccessKeyAuthenticator implements Authenticator {
  /** The checks of a key; the endpoint token authenticator holds this same object. */
  readonly usability: AccessKeyUsability;
  /**
   * The identity of a key object, while its User object is the same: one
   * AuthenticatedUser per key and not one per request, so what authorization works
   * out about a caller is remembered across requests (CallerResolver's memo).
   */
  private readonly identities = new WeakMap<
    KubeObject,
    { readonly owner: KubeObject | undefined; readonly user: AuthenticatedUser }
  >();

  constructor(
    private readonly source: AccessKeySource,
    private readonly options: AccessKeyAuthenticatorOptions,
  ) {
    this.usability = new AccessKeyUsability(source, options);
  }

  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    const token = bearerToken(req);
    if (token === null) return null;
    // Once the index has synced (every request but the first few), answered at once.
    if (this.source.hasSynced) return this.authenticateKey(token);
    return this.usability.whenSynced().then(
      () => this.authenticateKey(token),
      (err: unknown) => {
        countResult('unavailable');
        throw err;
      },
    );
  }

  /** The identity of `token`, looked up in the synced index; a 401 (thrown) or null when it is no usable key. */
  private authenticateKey(token: string): AuthenticatedUser | null {
    const hash = hashAccessKey(token);
    const key = this.source.accessKeyByHash(hash);
    if (!key || !sameHash(hash, storedKeyHash(key))) {
      // A token that may be another authenticator's (passUnknownTokens) is not counted as a failure here.
      if (this.options.passUnknownTokens !== true) countResult('unknown');
      return this.notAKey();
    }
    let user: AuthenticatedUser | undefined;
    try {
      this.usability.check(key);
      user = this.identityOf(key);
    } catch (err) {
      countResult('rejected');
      throw err;
    }
    if (!user) {
      countResult('rejected');
      throw newUnauthorized();
    }
    countResult('success');
    this.usability.recordUse(key);
    return user;
  }

  private identityOf(key: KubeObject): AuthenticatedUser | undefined {
    const userName = specString(key, 'user');
    const owner = userName ? this.source.user(userName) : undefined;
    const known = this.identities.get(key);
    if (known && known.owner === owner) return known.user;
    const user = accessKeyIdentity(key, this.source, this.options.revisionAnnotation);
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

/**
 * The two hashes are equal, compared in time that depends only on their length (as
 * timingSafeEqual, without copying both into Buffers on every request): the stored
 * form is fixed-length ASCII, so its length tells nothing.
 */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The counter's series of each result, resolved on first use and kept (see CounterFamily). */
const resultSeries = new Map<AccessKeyResult, CounterSeries>();

function countResult(result: AccessKeyResult): void {
  let series = resultSeries.get(result);
  if (!series) {
    series = accessKeyAuthentications.series({ result });
    resultSeries.set(result, series);
  }
  series.inc();
}
