// OwnedAccessKey (cluster scoped): a key that authenticates API calls and the
// command-line client as its user, team or subject. The value is a bearer token.
// The server keeps only a hash of it (see hashAccessKey): the plain key appears
// once, in the response to the write that set it, and never again.

import * as nodeCrypto from 'node:crypto';
import { createHash, randomInt } from 'node:crypto';

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessKeyScopeSchema,
  identitySchema,
  kindSchema,
  oidcLoginSchema,
  oidcProviderSchema,
  storedKindInfo,
  type AccessKeyIdentity,
  type AccessKeyOIDC,
  type AccessKeyOIDCProvider,
  type AccessKeyScope,
  type TypedObject,
} from './common.js';
import { bool, dateTime, enumOf, int64, obj, str, stringSet, type JSONSchema } from './schema-builders.js';

/** Key types upstream knows: who manages the key. */
export const ACCESS_KEY_TYPES = [
  '',
  'Login',
  'User',
  'Other',
  'Reset',
  'OIDCRefreshToken',
  'NetworkPeer',
  'Workspace',
] as const;

export type AccessKeyType = (typeof ACCESS_KEY_TYPES)[number];

export interface OwnedAccessKeySpec {
  displayName?: string;
  description?: string;
  user?: string;
  team?: string;
  subject?: string;
  groups?: string[];
  /** Stored: `sha256:<hex>`. Returned: '' (or the plain key once, on the write that set it). */
  key?: string;
  disabled?: boolean;
  /** Seconds. */
  ttl?: number;
  ttlAfterLastActivity?: boolean;
  scope?: AccessKeyScope;
  type?: AccessKeyType;
  identity?: AccessKeyIdentity;
  oidcProvider?: AccessKeyOIDCProvider;
  parent?: string;
  oidcLogin?: AccessKeyOIDC;
}

export interface OwnedAccessKeyStatus {
  lastActivity?: string;
}

export type OwnedAccessKey = TypedObject<OwnedAccessKeySpec, OwnedAccessKeyStatus>;

/**
 * The annotation in which the server records, at creation (and rotation), the
 * `spec.tokenGeneration` of the key's user. The key stops working once the user's
 * tokenGeneration grows past it. Clients cannot set or change it: the server
 * overwrites it on create and keeps the stored value on update.
 */
export function tokenGenerationAnnotation(group: string): string {
  return `${group}/token-generation`;
}

/**
 * The annotation in which the server records the uid of the User or Team a key
 * belonged to when that owner's reference was removed from the key (a delete of
 * the owner with propagationPolicy Orphan). The key then belongs to an owner that
 * is gone: a User or Team later created under the same name has another uid, so it
 * neither adopts the key nor is spoken for by it. Like the token generation, only
 * the server sets it: dropped on create, kept as stored on update.
 */
export function formerOwnerAnnotation(group: string): string {
  return `${group}/former-owner-uid`;
}

/**
 * The value of formerOwnerAnnotation for a key known to belong to a former owner
 * whose uid is not known (see keyPredatesOwner). It is never a uid (the server's
 * uids are UUIDs), so it differs from every owner's, as the authenticator and the
 * owner-reference rules compare it.
 */
export const UNKNOWN_FORMER_OWNER = 'unknown';

/** What the owner rules read of a key or its owner: when it was created, and its annotations. */
interface StampedObject {
  readonly metadata: {
    readonly creationTimestamp?: string | null;
    readonly annotations?: Readonly<Record<string, string>> | null;
  };
}

/**
 * True when `key` was created before `owner`, both times as the server set them
 * (whole seconds), and was stored before keys carried a revision
 * (`revisionAnnotation`, keyRevisionAnnotation(group)): such a key cannot have been
 * made for this owner, which did not exist yet, so it was made for an earlier User or
 * Team of that name and may have lost its reference to an orphaning delete before
 * those recorded the former owner. Only asked of keys that do not reference their
 * owner.
 *
 * A key with a revision was stored since orphaning deletes record the former owner
 * and a relabelled reference is refused (both came with the revision): if it
 * references no owner, it was made for a name with no owner yet, as GitOps tools
 * do when they apply a key and its User together (Helm, for one, creates kinds it
 * does not know in alphabetical order: OwnedAccessKey before Team and User), and
 * its owner adopts it. False when either time is unknown.
 */
export function keyPredatesOwner(
  key: StampedObject,
  owner: StampedObject,
  revisionAnnotation: string,
): boolean {
  if (key.metadata.annotations?.[revisionAnnotation] !== undefined) return false;
  const keyCreated = Date.parse(key.metadata.creationTimestamp ?? '');
  const ownerCreated = Date.parse(owner.metadata.creationTimestamp ?? '');
  return keyCreated < ownerCreated;
}

/**
 * How much older than its User an adopted key must be for keyAdoptedFromFormerUser to
 * call it a former User's: replicas stamp creationTimestamp from their own clocks, so
 * a key made just after its User on a replica whose clock is behind can look older.
 * Five minutes, the skew kube-controller-manager's CSR signer allows for (Backdate),
 * and far more than replicas kept in time drift.
 */
export const ADOPTED_KEY_CLOCK_SKEW_MS = 5 * 60_000;

/**
 * True when a user key that references its current User (`owner`) was adopted by it
 * from a former User of that name, before orphaning deletes recorded the former owner:
 * the key was stored before keys carried a revision (`revisionAnnotation`), it
 * recorded a tokenGeneration (`generationAnnotation`), which the server records on
 * create only when a User of the key's name exists, and it was created more than
 * ADOPTED_KEY_CLOCK_SKEW_MS before `owner`: so a User of that name existed when it was
 * made, and it was not this one. A key made while no User of the name existed (as Helm
 * applies an OwnedAccessKey before its User) recorded no generation and stays its
 * adopter's. A key rotated since carries a revision and is judged by its reference.
 */
export function keyAdoptedFromFormerUser(
  key: StampedObject,
  owner: StampedObject,
  revisionAnnotation: string,
  generationAnnotation: string,
): boolean {
  const annotations = key.metadata.annotations;
  if (annotations?.[revisionAnnotation] !== undefined || annotations?.[generationAnnotation] === undefined) {
    return false;
  }
  const keyCreated = Date.parse(key.metadata.creationTimestamp ?? '');
  const ownerCreated = Date.parse(owner.metadata.creationTimestamp ?? '');
  return keyCreated + ADOPTED_KEY_CLOCK_SKEW_MS < ownerCreated;
}

/**
 * The annotation in which the server keeps a random value of the key's current
 * value (its revision): drawn on create and again whenever spec.key changes,
 * kept as stored on every other update, never set by a client. Tokens and client
 * certificates made with the key record a digest of it (accessKeyDigest), which
 * changes on rotation and, unlike a digest of the key, tells nothing of the key's
 * value to whoever reads a token or a certificate. Keys stored before it have none
 * (their digest is of the stored hash, as before) until their next rotation.
 */
export function keyRevisionAnnotation(group: string): string {
  return `${group}/key-revision`;
}

const HASH_PREFIX = 'sha256:';

/**
 * node:crypto's one-shot `hash` (Node 20.12 and later): the same digest of the string's
 * UTF-8 bytes without a Hash object and its stream state, on every authenticated
 * request. Older Node 20 releases, which the engines field admits, use createHash.
 */
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/**
 * The stored form of an access key: `sha256:<hex of sha256(key)>`. The authenticator
 * hashes the bearer token it is given and looks the hash up; the plain key is never
 * stored. A plain random key of 64 letters carries ~300 bits, so an unsalted fast hash
 * is enough: there is nothing to guess.
 */
export function hashAccessKey(key: string): string {
  const hex = oneShotHash
    ? oneShotHash('sha256', key, 'hex')
    : createHash('sha256').update(key, 'utf8').digest('hex');
  return HASH_PREFIX + hex;
}

/** True for a value in the stored form (what hashAccessKey returns). */
export function isHashedAccessKey(value: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(value);
}

const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz';
export const GENERATED_KEY_LENGTH = 64;

/** A fresh random key: 64 lower-case letters, as upstream generates them. */
export function generateAccessKey(): string {
  let key = '';
  for (let i = 0; i < GENERATED_KEY_LENGTH; i++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

export function ownedAccessKeyInfo(group: string): ResourceInfo {
  return storedKindInfo(group, {
    resource: 'ownedaccesskeys',
    singular: 'ownedaccesskey',
    kind: 'OwnedAccessKey',
    namespaced: false,
  });
}

export function ownedAccessKeySchema(): JSONSchema {
  return kindSchema(
    'OwnedAccessKey authenticates API calls and the command-line client, for example in CI/CD pipelines: its key is sent as a bearer token.',
    obj('Desired state of the access key: whom it belongs to and what it may do.', {
      displayName: str('Name shown in the UI.'),
      description: str('What the key is used for.'),
      user: str(
        'Name of the User the key belongs to. Set exactly one of user, team and subject; cannot be changed.',
      ),
      team: str(
        'Name of the Team the key belongs to. Set exactly one of user, team and subject; cannot be changed.',
      ),
      subject: str(
        'A generic subject the key authenticates as, instead of a user or a team. Set exactly one of user, team and subject; cannot be changed.',
      ),
      groups: stringSet('Extra groups the caller gets when using this key.'),
      key: str(
        'The access key, used as a bearer token. Leave empty on create to have the server generate one. The server keeps only a hash: the key is returned once, in the response to the write that set it, and reads return an empty string. An update that leaves it empty keeps the key; any other value replaces it. A value of the form `sha256:<64 hex digits>` is taken as the hash of a key the server never sees.',
      ),
      disabled: bool('When true the key still exists but authenticates nothing.'),
      ttl: int64(
        'Time to live of the key in seconds, counted from creation (or from the last activity, see ttlAfterLastActivity). Zero means the key does not expire. Must not be negative.',
      ),
      ttlAfterLastActivity: bool(
        'When true the time to live counts from status.lastActivity instead of from creation.',
      ),
      scope: accessKeyScopeSchema(),
      type: enumOf(
        'Who manages the key: `User` for keys users manage themselves; `Login`, `Reset`, `OIDCRefreshToken`, `NetworkPeer`, `Workspace` and `Other` for keys the platform manages.',
        ACCESS_KEY_TYPES,
      ),
      identity: identitySchema(),
      oidcProvider: oidcProviderSchema(),
      parent: str('Deprecated: shared OIDC token information between keys.'),
      oidcLogin: oidcLoginSchema(),
    }),
    obj(
      'Observed state of the access key. Written through the status subresource; writes to the main resource keep it as stored.',
      {
        lastActivity: dateTime('When the key was last used to access the API.'),
      },
    ),
  );
}
