// Upstream's cap on Update entries (apimachinery managedfields/internal
// capmanagers.go): past the cap, the oldest Update entries are folded into one
// `ancient-changes` entry per apiVersion, so an object written by many clients does
// not grow without bound. Apply entries are never folded.

import { managerIdentifier, type Managed } from './managed.js';
import { compareStrings } from './value.js';

/** Upstream's cap on Update entries before the oldest are folded together. */
export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Folds the oldest Update entries into `ancient-changes` (one per apiVersion)
 * until at most `max` Update entries remain (upstream capManagersManager).
 */
export function capUpdateManagers(managed: Managed, max: number): void {
  const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  const secondsOf = (id: string): number => {
    const t = managed.times.get(id);
    return t ? Math.floor(Date.parse(t) / 1000) || 0 : 0;
  };
  updaters.sort((a, b) => secondsOf(a) - secondsOf(b) || compareStrings(a, b));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i] as string;
    const vs = managed.fields.get(id);
    if (!vs) continue;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({
      manager: ANCIENT_CHANGES_MANAGER,
      operation: 'Update',
      apiVersion: vs.apiVersion,
    });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      const s = managed.fields.get(first);
      managed.fields.delete(first);
      if (s) managed.fields.set(bucket, s);
    }
    const b = managed.fields.get(bucket);
    managed.fields.set(bucket, {
      set: b ? vs.set.union(b.set) : vs.set,
      apiVersion: vs.apiVersion,
      applied: vs.applied,
    });
    managed.fields.delete(id);
    length--;
    managed.times.set(bucket, time);
  }
}
