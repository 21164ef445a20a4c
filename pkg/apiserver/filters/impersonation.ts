// User impersonation, as k8s.io/apiserver's WithImpersonation serves it
// (endpoints/filters/impersonation.go), where DefaultBuildHandlerChain puts it: after
// authentication and audit, before max-in-flight and authorization.
//
// A caller asks to act as someone else with headers:
//   Impersonate-User                 the user (a service account when it reads
//                                    system:serviceaccount:<namespace>:<name>)
//   Impersonate-Group                a group; repeatable
//   Impersonate-Extra-<key>          an extra value; repeatable; <key> is percent-encoded
//   Impersonate-Uid                  the uid
// Groups, extras or a uid without a user are a 400. Otherwise each thing asked for is
// authorized for the caller, in upstream's order (user, groups, extras, uid), as the
// verb `impersonate` on:
//   users <name>                         API group ""
//   serviceaccounts <name> in <namespace> API group ""
//   groups <name>                        API group ""
//   userextras/<key> <value>             API group authentication.k8s.io
//   uids <uid>                           API group authentication.k8s.io
// and the first refusal is upstream's 403 (`users "bob" is forbidden: User "alice"
// cannot impersonate resource "users" in API group "" at the cluster scope`). Once
// every check passed the request is served as the impersonated user: the groups asked
// for (a service account's own two when none are), plus system:authenticated unless
// system:authenticated or system:unauthenticated was asked for (system:unauthenticated
// for system:anonymous instead), the extras and the uid. The audit event records it as
// impersonatedUser beside the caller's user, and the headers are removed.
//
// Nearly no request carries such a header: hasImpersonationHeaders() is one pass over
// the raw header names, comparing a first character, and nothing else runs then.
//
// kube-apiserver runs the filter on every request, the ones its handlers serve to
// anyone included (/healthz, /livez, /readyz, /version: system:public-info-viewer):
// there the caller is whoever its credentials say, or system:anonymous when it
// presented none (anonymous auth), and it still needs the verb `impersonate`.
// Paths this server serves without credentials (the probes, /version, the public
// documents, the console's files) do the same when such a header comes:
// callerOfUnauthenticatedPath() authenticates the caller as upstream's anonymous
// authenticator completes its union (union.NewFailOnError: credentials that fail
// are a 401, none at all is system:anonymous), then impersonate() decides.

import type { IncomingMessage } from 'node:http';

import { newBadRequest } from '../../apis/meta/errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../apis/meta/validation.js';
import type { AuditRecorder } from '../../audit/context.js';
import type { EventUser } from '../../audit/types.js';
import type { Authenticator } from '../../authentication/interfaces.js';
import type { AuthenticatedUser, UserInfo } from '../../authentication/user/user.js';
import type { Attributes, AuthorizationResult, Authorizer } from '../../authorization/interfaces.js';
import type { Awaitable } from '../../util/awaitable.js';
import type { Logger } from '../../util/log/index.js';
import { authenticate, forbidden } from '../filters.js';

const PREFIX = 'impersonate-';
const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_HEADER_PREFIX = 'impersonate-extra-';

const IMPERSONATE_VERB = 'impersonate';
const AUTHENTICATION_GROUP_VERSION = 'authentication.k8s.io/v1';

const SERVICE_ACCOUNT_USERNAME_PREFIX = 'system:serviceaccount:';
const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
const SERVICE_ACCOUNT_GROUP_PREFIX = 'system:serviceaccounts:';
const ANONYMOUS_USER = 'system:anonymous';
/** Who kube-apiserver's anonymous authenticator says a caller without credentials is. */
const ANONYMOUS: AuthenticatedUser = { name: ANONYMOUS_USER, groups: ['system:unauthenticated'] };
const ALL_AUTHENTICATED = 'system:authenticated';
const ALL_UNAUTHENTICATED = 'system:unauthenticated';

/** 'i' | 0x20 lower-cases an ASCII letter: the first test of every header name. */
const LOWER_I = 0x69;

/**
 * Whether any Impersonate-* header came with the request. The only work a request
 * without one pays for impersonation: a first-character test per header name.
 */
export function hasImpersonationHeaders(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (
      name.length > PREFIX.length &&
      (name.charCodeAt(0) | 0x20) === LOWER_I &&
      name.slice(0, PREFIX.length).toLowerCase() === PREFIX
    ) {
      return true;
    }
  }
  return false;
}

/**
 * The caller of a request to a path served without credentials, asked only when it
 * carries Impersonate-* headers: the identity its credentials prove, a 401 when they
 * prove none (as on every other path), or system:anonymous when it presented none.
 */
export function callerOfUnauthenticatedPath(
  authenticator: Authenticator,
  req: IncomingMessage,
  logger: Logger,
): Awaitable<AuthenticatedUser> {
  const orAnonymous: Authenticator = {
    authenticate(r) {
      const user = authenticator.authenticate(r);
      return user instanceof Promise ? user.then((u) => u ?? ANONYMOUS) : (user ?? ANONYMOUS);
    },
  };
  return authenticate(orAnonymous, req, logger);
}

/** One thing the caller asks to be (upstream builds v1.ObjectReferences). */
export interface ImpersonationRequest {
  readonly kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  readonly namespace: string;
  readonly name: string;
  readonly apiVersion: string;
  /** The extra's key (upstream carries it in ObjectReference.FieldPath). */
  readonly fieldPath: string;
}

/** The Impersonate-* header lines, in the order they came; names lower-cased. */
interface ImpersonationHeaders {
  readonly users: string[];
  readonly groups: string[];
  readonly uids: string[];
  /** By decoded key, in the order the keys first came. */
  readonly extras: Map<string, string[]>;
}

function readHeaders(req: IncomingMessage): ImpersonationHeaders {
  const out: ImpersonationHeaders = { users: [], groups: [], uids: [], extras: new Map() };
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith(PREFIX)) continue;
    const value = raw[i + 1]!;
    if (name === USER_HEADER) out.users.push(value);
    else if (name === GROUP_HEADER) out.groups.push(value);
    else if (name === UID_HEADER) out.uids.push(value);
    else if (name.startsWith(EXTRA_HEADER_PREFIX)) {
      const key = unescapeExtraKey(name.slice(EXTRA_HEADER_PREFIX.length));
      const values = out.extras.get(key);
      if (values) values.push(value);
      else out.extras.set(key, [value]);
    }
  }
  return out;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/**
 * Go's url.PathUnescape of an (already lower-cased) extra key: %XX decoded as bytes,
 * `+` kept; a malformed escape keeps the key as it came, as upstream records it.
 */
export function unescapeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  const raw = Buffer.from(encoded, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b !== 0x25) {
      bytes.push(b);
      continue;
    }
    const hi = hexValue(raw[i + 1] ?? -1);
    const lo = hexValue(raw[i + 2] ?? -1);
    if (hi < 0 || lo < 0) return encoded;
    bytes.push(hi * 16 + lo);
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** serviceaccount.SplitUsername: [namespace, name] of a valid service account username. */
export function splitServiceAccountUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USERNAME_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USERNAME_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (isDNS1123Label(namespace).length > 0 || isDNS1123Subdomain(name).length > 0) return undefined;
  return [namespace, name];
}

function request(
  kind: ImpersonationRequest['kind'],
  name: string,
  more: Partial<ImpersonationRequest> = {},
): ImpersonationRequest {
  return { kind, namespace: '', name, apiVersion: '', fieldPath: '', ...more };
}

/** Go's %v of a v1.ObjectReference, which upstream's 400 prints. */
function formatReference(r: ImpersonationRequest): string {
  return `{${r.kind} ${r.namespace} ${r.name}  ${r.apiVersion}  ${r.fieldPath}}`;
}

/**
 * buildImpersonationRequests: what the headers ask for, in upstream's order; throws
 * the 400 when groups, extras or a uid come without a user.
 */
export function impersonationRequests(req: IncomingMessage): ImpersonationRequest[] {
  const headers = readHeaders(req);
  const requests: ImpersonationRequest[] = [];
  // Header.Get: the first line's value.
  const user = headers.users[0] ?? '';
  if (user !== '') {
    const sa = splitServiceAccountUsername(user);
    requests.push(sa ? request('ServiceAccount', sa[1], { namespace: sa[0] }) : request('User', user));
  }
  for (const group of headers.groups) requests.push(request('Group', group));
  for (const [key, values] of headers.extras) {
    for (const value of values) {
      requests.push(
        request('UserExtra', value, { apiVersion: AUTHENTICATION_GROUP_VERSION, fieldPath: key }),
      );
    }
  }
  const uid = headers.uids[0] ?? '';
  if (uid !== '') requests.push(request('UID', uid, { apiVersion: AUTHENTICATION_GROUP_VERSION }));
  const others = headers.groups.length > 0 || headers.extras.size > 0 || uid !== '';
  if (others && user === '') {
    throw newBadRequest(
      `requested [${requests.map(formatReference).join(' ')}] without impersonating a user`,
    );
  }
  return requests;
}

/** The authorizer's question for one impersonation request (actingAsAttributes). */
export function impersonationAttributes(requestor: AuthenticatedUser, r: ImpersonationRequest): Attributes {
  const core = r.kind === 'User' || r.kind === 'ServiceAccount' || r.kind === 'Group';
  const resource = {
    User: 'users',
    ServiceAccount: 'serviceaccounts',
    Group: 'groups',
    UserExtra: 'userextras',
    UID: 'uids',
  }[r.kind];
  return {
    user: requestor,
    verb: IMPERSONATE_VERB,
    isResourceRequest: true,
    path: '',
    apiGroup: core ? '' : 'authentication.k8s.io',
    apiVersion: 'v1',
    resource,
    subresource: r.kind === 'UserExtra' ? r.fieldPath : '',
    namespace: r.namespace,
    name: r.name,
  };
}

/** Who the request is served as once every request was allowed. */
export function impersonatedUserInfo(
  requests: readonly ImpersonationRequest[],
  groupsSpecified: boolean,
): UserInfo {
  let name = '';
  let uid = '';
  let groups: string[] = [];
  // A Map, not an object: an extra key is the caller's text (`constructor`, `__proto__`).
  const extra = new Map<string, string[]>();
  for (const r of requests) {
    switch (r.kind) {
      case 'ServiceAccount':
        name = `${SERVICE_ACCOUNT_USERNAME_PREFIX}${r.namespace}:${r.name}`;
        if (!groupsSpecified)
          groups = [ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_GROUP_PREFIX + r.namespace];
        break;
      case 'User':
        name = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UserExtra': {
        const values = extra.get(r.fieldPath);
        if (values) values.push(r.name);
        else extra.set(r.fieldPath, [r.name]);
        break;
      }
      case 'UID':
        uid = r.name;
        break;
    }
  }
  if (name !== ANONYMOUS_USER) {
    if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED))
      groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_UNAUTHENTICATED);
  }
  return {
    name,
    groups,
    ...(uid !== '' ? { uid } : {}),
    // Object.fromEntries defines each key as an own property, `__proto__` included.
    ...(extra.size > 0 ? { extra: Object.fromEntries(extra) } : {}),
  };
}

/** audit.LogImpersonatedUser: the user the event records as impersonatedUser. */
export function impersonatedEventUser(user: UserInfo): EventUser {
  const out: EventUser = { username: user.name };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) {
    out.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  }
  return out;
}

/** Removes every Impersonate-* header (headers, headersDistinct and rawHeaders). */
function removeImpersonationHeaders(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (!lower.startsWith(PREFIX)) {
      kept.push(name, raw[i + 1]!);
      continue;
    }
    delete req.headers[lower];
    delete (req.headersDistinct as Record<string, string[] | undefined>)[lower];
  }
  req.rawHeaders = kept;
}

/** What the filter reads of the request and changes on it. */
export interface ImpersonationScope {
  readonly req: IncomingMessage;
  readonly user: AuthenticatedUser | undefined;
  readonly audit: AuditRecorder | undefined;
}

function identity(requestor: AuthenticatedUser, info: UserInfo): AuthenticatedUser {
  const impersonator: UserInfo = {
    name: requestor.name,
    groups: requestor.groups,
    ...(requestor.uid !== undefined ? { uid: requestor.uid } : {}),
    ...(requestor.extra !== undefined ? { extra: requestor.extra } : {}),
  };
  // A host identity's impersonation is still one the host's authorizer decides for, as
  // it does for the identity kube-apiserver forwards after impersonating.
  return { ...info, ...(requestor.hostIdentity === true ? { hostIdentity: true } : {}), impersonator };
}

/**
 * WithImpersonation, for a request that carries Impersonate-* headers: the identity it
 * is served as (the caller itself when the headers ask for nothing). Throws the 400 of
 * a malformed request or the 403 of the first refusal. Synchronous when the authorizer
 * answered synchronously.
 */
export function impersonate(
  authorizer: Authorizer,
  scope: ImpersonationScope,
  logger?: Logger,
): Awaitable<AuthenticatedUser> {
  const requestor = scope.user;
  if (!requestor) throw new Error('impersonation before authentication');
  const requests = impersonationRequests(scope.req);
  if (requests.length === 0) return requestor;
  const attributes = requests.map((r) => impersonationAttributes(requestor, r));
  const done = (): AuthenticatedUser => {
    const info = impersonatedUserInfo(
      requests,
      requests.some((r) => r.kind === 'Group'),
    );
    scope.audit?.logImpersonatedUser(impersonatedEventUser(info));
    removeImpersonationHeaders(scope.req);
    return identity(requestor, info);
  };
  const checked = checkAll(authorizer, attributes, 0, logger);
  return checked instanceof Promise ? checked.then(done) : done();
}

/** Upstream refuses on an error as on a denial: a 403, with the reason if any. */
function refused(
  attrs: Attributes,
  result: AuthorizationResult | undefined,
  err: unknown,
  logger?: Logger,
): never {
  if (err !== undefined) logger?.error('impersonation: authorizer failed', { error: String(err) });
  throw forbidden(attrs, result?.reason);
}

/** Asks about every attribute in order; stays synchronous until an answer is a promise. */
function checkAll(
  authorizer: Authorizer,
  attributes: readonly Attributes[],
  from: number,
  logger: Logger | undefined,
): Awaitable<void> {
  for (let i = from; i < attributes.length; i++) {
    const attrs = attributes[i]!;
    let result: Awaitable<AuthorizationResult>;
    try {
      result = authorizer.authorize(attrs);
    } catch (err) {
      return refused(attrs, undefined, err, logger);
    }
    if (result instanceof Promise) {
      return result.then(
        (r) => {
          if (r.decision !== 'allow') refused(attrs, r, undefined, logger);
          return checkAll(authorizer, attributes, i + 1, logger);
        },
        (err: unknown) => refused(attrs, undefined, err, logger),
      );
    }
    if (result.decision !== 'allow') refused(attrs, result, undefined, logger);
  }
}
