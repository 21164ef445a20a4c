// OwnedAccessKey: the server generates the key when none is given, stores only its
// hash, and shows the plain key once, in the response to the write that set it.
// A PUT of the object as read (key "") keeps the key; another value rotates it.
// identity.connectorData is write-only, and status.lastActivity is the server's.
// The annotation tokenGenerationAnnotation(group) records the tokenGeneration of
// the key's user when the key was made (or last rotated): the server sets it, a
// client can neither set nor change it, and the key stops working once the user's
// tokenGeneration grows past it. formerOwnerAnnotation(group), also the server's,
// records the owner an orphaning delete took from the key (owner-reference.ts).

import { randomBytes } from 'node:crypto';
import {
  forbidden,
  invalid,
  required,
  type FieldError,
  type FieldPath,
} from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { StorageDeadline } from '../../../storage/deadline.js';
import { userTokenGeneration } from '../../../identity/token-generation.js';
import {
  generateAccessKey,
  hashAccessKey,
  isHashedAccessKey,
  ownedAccessKeyInfo,
  ownedAccessKeySchema,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../../apis/management/v1/owned-access-key.js';
import type { RequestContext, Strategy } from '../../rest/interfaces.js';
import {
  DISPLAY_NAME_COLUMN,
  dropStatus,
  keepStoredStatus,
  specBooleanColumn,
  specOf,
  specPath,
  specStringColumn,
  validateNonEmptyEntries,
  validateNonNegative,
} from '../common.js';
import { KeyReveals } from './key-reveals.js';
import {
  ensureKeyOwnerReference,
  keepFormerOwner,
  readingOnce,
  requestedFormerOwner,
  type KeyOwnerLookup,
} from './owner-reference.js';
import { validateScope } from './scope-validation.js';

/** Bearer tokens travel in a header: visible ASCII only, of sensible length. */
const KEY_SHAPE = /^[\x21-\x7e]{1,1024}$/;

const SUBJECT_FIELDS = ['user', 'team', 'subject'] as const;

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function subjectErrors(spec: Record<string, unknown>, path: FieldPath): FieldError[] {
  const set = SUBJECT_FIELDS.filter((f) => nonEmptyString(spec[f]));
  if (set.length === 0) {
    return [required(path.child('user'), 'an access key must belong to a user, a team or a subject')];
  }
  return set
    .slice(1)
    .map((f) => forbidden(path.child(f), `may not be set together with spec.${set[0] ?? ''}`));
}

export interface OwnedAccessKeyStrategyOptions {
  /** Where plain keys wait for their response (tests pass their own). */
  readonly reveals?: KeyReveals;
  /** Key generator (tests pass their own). */
  readonly generateKey?: () => string;
  /**
   * The current `spec.tokenGeneration` of the User named `name` (undefined when
   * there is no such user). Without it every key records generation 0.
   */
  readonly tokenGenerationOf?: (name: string, deadline?: StorageDeadline) => Promise<number | undefined>;
  /**
   * The current User or Team a key names. With it, every stored key carries an
   * ownerReference to its owner (see owner-reference.ts); without it, none is set.
   */
  readonly keyOwner?: KeyOwnerLookup;
  /**
   * Take the generation from the User that `keyOwner` reads (in place of
   * tokenGenerationOf): a write then reads its User once, and that one read gives
   * both the generation it records and the uid its ownerReference names. On etcd
   * each read is a consistent read with a round trip of its own, so a key's create
   * made two before.
   */
  readonly generationFromKeyOwner?: boolean;
}

/**
 * Prefixes only the server and the host cluster hand out. Kubernetes reserves
 * `system:` for the identities its own components and controllers mint (no token
 * a user can create ever carries system:masters or a system: user), and `team:`
 * is how the server names a team's identity. No key may claim either, whoever
 * creates it, administrators included: validation cannot see the caller, and an
 * administrator who wants an administrator's key gives it `platform:admins`.
 */
const RESERVED_GROUP_PREFIXES = ['system:', 'team:'];
const RESERVED_NAME_PREFIXES = ['system:', 'team:'];

/** spec.user, spec.team and spec.subject may not name a reserved identity. */
function validateOwnerNames(spec: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of SUBJECT_FIELDS) {
    const value = spec[f];
    if (typeof value !== 'string') continue;
    const reserved = RESERVED_NAME_PREFIXES.find((p) => value.startsWith(p));
    if (reserved) errs.push(invalid(path.child(f), value, `names starting with "${reserved}" are reserved`));
  }
  return errs;
}

function validateGroups(list: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errs: FieldError[] = [];
  list.forEach((group, i) => {
    if (typeof group !== 'string') return;
    const reserved = RESERVED_GROUP_PREFIXES.find((p) => group.startsWith(p));
    if (reserved) {
      errs.push(invalid(path.index(i), group, `groups starting with "${reserved}" are reserved`));
    }
  });
  return errs;
}

export function ownedAccessKeyStrategy(group: string, options: OwnedAccessKeyStrategyOptions = {}): Strategy {
  const reveals = options.reveals ?? new KeyReveals();
  const generateKey = options.generateKey ?? generateAccessKey;
  const generationAnnotation = tokenGenerationAnnotation(group);

  /** The generation of the User named `name` as stored now (undefined: no such User, or none asked for). */
  async function generationOf(
    name: string,
    owners: KeyOwnerLookup | undefined,
    deadline: StorageDeadline | undefined,
  ): Promise<number | undefined> {
    if (name === '') return undefined;
    if (options.generationFromKeyOwner && owners) {
      const user = await owners('User', name, deadline);
      return user ? userTokenGeneration(user) : undefined;
    }
    return options.tokenGenerationOf ? options.tokenGenerationOf(name, deadline) : undefined;
  }

  /** Records the generation of the key's user (user keys and subject keys of a User). */
  async function recordGeneration(
    obj: KubeObject,
    owners: KeyOwnerLookup | undefined,
    deadline: StorageDeadline | undefined,
  ): Promise<void> {
    const spec = specOf(obj);
    const owner = nonEmptyString(spec['user'])
      ? spec['user']
      : nonEmptyString(spec['subject'])
        ? spec['subject']
        : '';
    const generation = await generationOf(owner, owners, deadline);
    const annotations = { ...(obj.metadata.annotations ?? {}) };
    delete annotations[generationAnnotation];
    if (generation !== undefined) annotations[generationAnnotation] = String(generation);
    if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
    else delete obj.metadata.annotations;
  }

  const revisionAnnotation = keyRevisionAnnotation(group);

  /**
   * Server-owned, like the generation: a new random revision for a key whose value
   * is new (`fresh`), else the stored one (or none, for a key stored before keys had
   * one), whatever the client sent. See keyRevisionAnnotation.
   */
  function setRevision(obj: KubeObject, fresh: boolean, old?: KubeObject): void {
    const value = fresh
      ? randomBytes(16).toString('base64url')
      : old?.metadata.annotations?.[revisionAnnotation];
    const annotations = { ...(obj.metadata.annotations ?? {}) };
    if (value === undefined) delete annotations[revisionAnnotation];
    else annotations[revisionAnnotation] = value;
    if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
    else delete obj.metadata.annotations;
  }

  /** An update keeps the generation the key was made under (or has none, as before). */
  function keepGeneration(obj: KubeObject, old: KubeObject): void {
    const stored = old.metadata.annotations?.[generationAnnotation];
    const annotations = { ...(obj.metadata.annotations ?? {}) };
    if (stored === undefined) delete annotations[generationAnnotation];
    else annotations[generationAnnotation] = stored;
    if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
    else delete obj.metadata.annotations;
  }
  // A supplied key that cannot be a bearer token, noted by prepare* for validate*
  // (which receive the same object right after).
  const badKeys = new WeakMap<KubeObject, FieldError>();
  // Likewise a write that drops the reference to the key's existing owner, or
  // carries the owner's uid under another kind or name.
  const droppedOwners = new WeakMap<KubeObject, FieldError>();

  /** Replaces the plain key in `spec` by its hash and sets the plain key aside. */
  function storeHashOf(
    ctx: RequestContext,
    obj: KubeObject,
    spec: Record<string, unknown>,
    plain: string,
  ): void {
    if (isHashedAccessKey(plain)) return; // already in stored form: nothing to reveal
    if (!KEY_SHAPE.test(plain)) {
      badKeys.set(
        obj,
        // Never echo the value: it is a credential.
        {
          ...invalid(specPath().child('key'), undefined, 'must be 1 to 1024 visible ASCII characters'),
          omitValue: true,
        },
      );
    }
    const hash = hashAccessKey(plain);
    spec['key'] = hash;
    reveals.setAside(hash, plain, ctx);
  }

  function validateKey(obj: KubeObject): FieldError[] {
    const spec = specOf(obj);
    const path = specPath();
    const errs: FieldError[] = [];
    const bad = badKeys.get(obj);
    if (bad) errs.push(bad);
    const dropped = droppedOwners.get(obj);
    if (dropped) errs.push(dropped);
    errs.push(...subjectErrors(spec, path));
    errs.push(...validateOwnerNames(spec, path));
    errs.push(...validateNonNegative(spec['ttl'], path.child('ttl')));
    errs.push(...validateNonEmptyEntries(spec['groups'], path.child('groups')));
    errs.push(...validateGroups(spec['groups'], path.child('groups')));
    errs.push(...validateScope(spec['scope'], path.child('scope')));
    return errs;
  }

  return {
    info: ownedAccessKeyInfo(group),
    schema: ownedAccessKeySchema(),
    // status has its own subresource: only writes through it change it.
    status: {},

    async prepareForCreate(ctx: RequestContext, obj: KubeObject): Promise<void> {
      const owners = options.keyOwner && readingOnce(options.keyOwner);
      dropStatus(obj);
      await recordGeneration(obj, owners, ctx.deadline);
      setRevision(obj, true);
      keepFormerOwner(group, obj);
      const refused = owners && (await ensureKeyOwnerReference(group, owners, obj, undefined, ctx.deadline));
      if (refused) droppedOwners.set(obj, refused);
      if (obj['spec'] === undefined) obj['spec'] = {};
      const spec = obj['spec'];
      if (!isObject(spec)) return;
      const key = spec['key'];
      if (key === undefined || key === null || key === '') storeHashOf(ctx, obj, spec, generateKey());
      else if (typeof key === 'string') storeHashOf(ctx, obj, spec, key);
    },

    async prepareForUpdate(ctx: RequestContext, obj: KubeObject, old: KubeObject): Promise<void> {
      keepStoredStatus(obj, old);
      keepGeneration(obj, old);
      setRevision(obj, false, old);
      const readopt = requestedFormerOwner(group, obj, old);
      keepFormerOwner(group, obj, old);
      const owners = options.keyOwner && readingOnce(options.keyOwner);
      const dropped =
        owners && (await ensureKeyOwnerReference(group, owners, obj, old, ctx.deadline, readopt));
      if (dropped) droppedOwners.set(obj, dropped);
      const spec = obj['spec'];
      if (!isObject(spec)) return;
      const oldSpec = specOf(old);
      const stored = oldSpec['key'];
      const key = spec['key'];
      if (key === undefined || key === null || key === '' || key === stored) {
        // The object as read shows no key: sending it back keeps the key working.
        if (typeof stored === 'string') spec['key'] = stored;
        else delete spec['key'];
      } else if (typeof key === 'string') {
        storeHashOf(ctx, obj, spec, key);
        // A rotated key is a new credential, made under the user's current generation,
        // and a new value: tokens and certificates made with the old one end.
        await recordGeneration(obj, owners, ctx.deadline);
        setRevision(obj, true);
      }
      // connectorData is never returned, so an update that leaves it out keeps it.
      const identity = spec['identity'];
      const oldIdentity = oldSpec['identity'];
      if (
        isObject(identity) &&
        identity['connectorData'] === undefined &&
        isObject(oldIdentity) &&
        oldIdentity['connectorData'] !== undefined
      ) {
        identity['connectorData'] = oldIdentity['connectorData'];
      }
    },

    validate: (_ctx, obj) => validateKey(obj),

    validateUpdate(_ctx, obj, old): FieldError[] {
      const errs = validateKey(obj);
      const spec = specOf(obj);
      const oldSpec = specOf(old);
      for (const f of SUBJECT_FIELDS) {
        // Moving a key to another owner would hand its holder that owner's rights.
        if ((spec[f] ?? '') !== (oldSpec[f] ?? '')) {
          errs.push(invalid(specPath().child(f), spec[f] ?? '', 'field is immutable'));
        }
      }
      return errs;
    },

    tableColumns: [
      DISPLAY_NAME_COLUMN,
      specStringColumn('User', 'user', 'User the key belongs to.'),
      specStringColumn('Team', 'team', 'Team the key belongs to.'),
      specStringColumn('Type', 'type', 'Who manages the key.'),
      specBooleanColumn('Disabled', 'disabled', 'Whether the key is disabled.'),
    ],

    decorate(obj: KubeObject, created: boolean, ctx?: RequestContext): KubeObject {
      const spec = obj['spec'];
      if (!isObject(spec)) return obj;
      const stored = spec['key'];
      const plain =
        typeof stored === 'string' && stored !== '' ? reveals.take(stored, created, ctx) : undefined;
      const shown: Record<string, unknown> = { ...spec, key: plain ?? '' };
      const identity = spec['identity'];
      if (isObject(identity) && 'connectorData' in identity) {
        const { connectorData: _hidden, ...rest } = identity;
        shown['identity'] = rest;
      }
      return { ...obj, spec: shown };
    },
  };
}
