// Access keys as bearer tokens. The presented key is hashed (stored keys hold only
// `sha256:<hex>`) and looked up in the AccessKeyIndex; a match is then checked by
// each AccessKeyCheck in turn. The checks are the seam for what comes next (expiry,
// disabled users, tokenGeneration): each is a small function that throws a 401
// ApiError telling the caller what to do. Nothing here ever logs a key.
//
// Identity of a key (UserInfo):
//   spec.user:    name = the user's name
//   spec.team:    name = "team:<team>" (no User can be called that: object names
//                 cannot contain ':'), plus group "team:<team>" so rules can name it
//   spec.subject: name = the subject as given
// groups = spec.groups + the above + "system:authenticated"; accessKeyName = the
// key object's name.

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { newServiceUnavailable, newUnauthorized } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import { hashAccessKey } from '../apis/management/v1/owned-access-key.js';
import type { AccessKeyIndex } from './access-key-index.js';
import { storedKeyHash } from './access-key-index.js';
import { bearerToken } from './bearer-token.js';
import type { AuthenticatedUser, Authenticator } from './interfaces.js';

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const TEAM_PREFIX = 'team:';

/** Throws a 401 ApiError when the key must not authenticate; returns when it may. */
export type AccessKeyCheck = (key: KubeObject) => void | Promise<void>;

/** `spec.disabled: true` keys exist but authenticate nothing. */
export const rejectDisabledKey: AccessKeyCheck = (key) => {
  const spec = isObject(key.spec) ? key.spec : {};
  if (spec.disabled === true) {
    throw newUnauthorized(
      `the access key "${key.metadata.name ?? ''}" is disabled; ask an administrator to enable it or use another key`,
    );
  }
};

export const DEFAULT_ACCESS_KEY_CHECKS: readonly AccessKeyCheck[] = [rejectDisabledKey];

/** Who a key speaks for, or undefined when it names nobody (such a key cannot authenticate). */
export function accessKeyIdentity(key: KubeObject): AuthenticatedUser | undefined {
  const spec = isObject(key.spec) ? key.spec : {};
  const extraGroups = Array.isArray(spec.groups)
    ? spec.groups.filter((g): g is string => typeof g === 'string' && g !== '')
    : [];
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  let name: string;
  const groups: string[] = [...extraGroups];
  if (str(spec.user)) name = str(spec.user);
  else if (str(spec.team)) {
    name = TEAM_PREFIX + str(spec.team);
    groups.push(name);
  } else if (str(spec.subject)) name = str(spec.subject);
  else return undefined;
  groups.push(AUTHENTICATED_GROUP);
  const user: AuthenticatedUser = { name, groups: [...new Set(groups)] };
  const keyName = key.metadata.name;
  return keyName ? { ...user, accessKeyName: keyName } : user;
}

export interface AccessKeyAuthenticatorOptions {
  readonly checks?: readonly AccessKeyCheck[];
  /** How long a request waits for the index's first sync before a 503. */
  readonly syncTimeoutMs?: number;
}

export class AccessKeyAuthenticator implements Authenticator {
  private readonly checks: readonly AccessKeyCheck[];
  private readonly syncTimeoutMs: number;

  constructor(
    private readonly index: AccessKeyIndex,
    options: AccessKeyAuthenticatorOptions = {},
  ) {
    this.checks = options.checks ?? DEFAULT_ACCESS_KEY_CHECKS;
    this.syncTimeoutMs = options.syncTimeoutMs ?? 10_000;
  }

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    const token = bearerToken(req);
    if (token === null) return null;
    if (!this.index.hasSynced && !(await this.index.waitForSync(this.syncTimeoutMs))) {
      // Saying 401 here would tell a valid caller their key is wrong; it is the server that is not ready.
      throw newServiceUnavailable('the access key index is not ready yet, please try again');
    }
    const hash = hashAccessKey(token);
    const key = this.index.lookup(hash);
    if (!key || !sameHash(hash, storedKeyHash(key))) throw newUnauthorized();
    for (const check of this.checks) await check(key);
    const user = accessKeyIdentity(key);
    if (!user) throw newUnauthorized();
    return user;
  }
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
