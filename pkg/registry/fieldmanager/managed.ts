// managedFields on the wire and in the engine (apimachinery managedfields/internal
// managedfields.go): entries are decoded into field sets keyed by a manager
// identifier (the entry without fieldsType, fieldsV1 and time, and without
// apiVersion for appliers, as JSON), and encoded back sorted as upstream sorts
// them: Apply before Update, then by time (whole seconds), manager, apiVersion,
// subresource.

import type { ManagedFieldsEntry } from '../../apis/meta/types.js';
import type { FieldSet } from './field-set.js';
import { fieldsV1ToSet, setToFieldsV1 } from './fields-v1.js';
import type { ManagedFieldSets, VersionedSet } from './updater.js';
import { compareStrings, goJSONString } from './value.js';

/** Field sets and their entries' times, both keyed by manager identifier. */
export interface Managed {
  readonly fields: ManagedFieldSets;
  readonly times: Map<string, string | undefined>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export class ManagedFieldsError extends Error {
  override readonly name = 'ManagedFieldsError';
}

interface IdentifierParts {
  manager?: string | undefined;
  operation?: string | undefined;
  apiVersion?: string | undefined;
  subresource?: string | undefined;
}

/**
 * The identifier of an entry's manager: its JSON without fieldsType, fieldsV1 and
 * time, and without apiVersion for Apply (an applier stays one manager across
 * versions). Field order and escaping as Go's encoding/json writes the struct.
 */
export function managerIdentifier(e: IdentifierParts): string {
  const parts: string[] = [];
  if (e.manager) parts.push(`"manager":${goJSONString(e.manager)}`);
  if (e.operation) parts.push(`"operation":${goJSONString(e.operation)}`);
  if (e.apiVersion && e.operation !== 'Apply') parts.push(`"apiVersion":${goJSONString(e.apiVersion)}`);
  if (e.subresource) parts.push(`"subresource":${goJSONString(e.subresource)}`);
  return '{' + parts.join(',') + '}';
}

/** Identifiers parsed lately: every write encodes the same few (bounded: they come from clients). */
const parsedIdentifiers = new Map<string, Readonly<IdentifierParts> | undefined>();
const PARSED_IDENTIFIERS_LIMIT = 1024;

/** The parts of an identifier (its manager name, operation, apiVersion, subresource); frozen, shared. */
export function parseManagerIdentifier(id: string): Readonly<IdentifierParts> | undefined {
  if (parsedIdentifiers.has(id)) return parsedIdentifiers.get(id);
  const parts = parseIdentifier(id);
  if (parsedIdentifiers.size >= PARSED_IDENTIFIERS_LIMIT) parsedIdentifiers.clear();
  parsedIdentifiers.set(id, parts);
  return parts;
}

function parseIdentifier(id: string): Readonly<IdentifierParts> | undefined {
  try {
    const v = JSON.parse(id) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const r = v as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof r[k] === 'string' ? (r[k] as string) : undefined);
    return Object.freeze({
      manager: str('manager'),
      operation: str('operation'),
      apiVersion: str('apiVersion'),
      subresource: str('subresource'),
    });
  } catch {
    return undefined;
  }
}

/** Reads an object's managedFields (upstream DecodeManagedFields); throws ManagedFieldsError. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Managed {
  const managed = emptyManaged();
  (entries ?? []).forEach((e, i) => {
    if (e.operation !== 'Apply' && e.operation !== 'Update')
      throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new ManagedFieldsError('apiVersion must not be empty');
    if (!e.fieldsType) throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(
        `invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`,
      );
    const id = managerIdentifier(e);
    let set: FieldSet;
    try {
      set = fieldsV1ToSet(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set of entry ${i}: ${(err as Error).message}`);
    }
    const vs: VersionedSet = { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' };
    managed.fields.set(id, vs);
    managed.times.set(id, e.time);
  });
  return managed;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

function compareEntries(p: ManagedFieldsEntry, q: ManagedFieldsEntry): number {
  const by = (a: string | undefined, b: string | undefined): number => compareStrings(a ?? '', b ?? '');
  if (p.operation !== q.operation) return by(p.operation, q.operation);
  const ps = seconds(p.time);
  const qs = seconds(q.time);
  if (ps !== qs) return ps < qs ? -1 : 1;
  return by(p.manager, q.manager) || by(p.apiVersion, q.apiVersion) || by(p.subresource, q.subresource);
}

/** Writes field sets back as managedFields entries in upstream's order (undefined when none). */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.fields.size === 0) return undefined;
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const parts = parseManagerIdentifier(id) ?? {};
    const entry: ManagedFieldsEntry = {};
    if (parts.manager) entry.manager = parts.manager;
    const operation = vs.applied ? 'Apply' : parts.operation;
    if (operation === 'Apply' || operation === 'Update') entry.operation = operation;
    entry.apiVersion = vs.apiVersion;
    const time = managed.times.get(id);
    if (time) entry.time = time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = setToFieldsV1(vs.set);
    if (parts.subresource) entry.subresource = parts.subresource;
    entries.push(entry);
  }
  return entries.sort(compareEntries);
}

/**
 * True when a write asks to clear managedFields: an empty list, or a list of one
 * empty entry (upstream isResetManagedFields).
 */
export function isResetManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  if (entries.length !== 1) return false;
  const only = entries[0] as Record<string, unknown>;
  return Object.values(only).every((v) => v === undefined || v === '' || v === null);
}
