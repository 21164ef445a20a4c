// kubectl's client-side apply annotation in server-side apply (apimachinery
// managedfields/internal lastappliedmanager.go, lastappliedupdater.go): kubectl's
// first server-side apply over an object it applied client-side may take the
// fields its annotation still describes, and its later applies keep the annotation
// in step with what they apply. Only the manager `kubectl` gets this treatment.

import type { KubeObject } from '../../apis/meta/types.js';
import type { FieldSet } from './field-set.js';
import type { Atom } from './schema.js';
import { compareValuesTyped, toFieldSet } from './typed.js';
import { goJSON, type Value } from './value.js';

/** kubectl's client-side apply annotation, which its server-side apply upgrades from. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** The manager name kubectl's server-side apply uses. */
export const KUBECTL_MANAGER = 'kubectl';

/**
 * The fields kubectl applied client-side that the live object still holds as
 * applied; undefined when there is no usable annotation (of another version, or
 * not an object that fits the schema).
 */
export function allowedConflictsFromLastApplied(
  liveObj: KubeObject,
  apiVersion: string,
  atom: Atom,
): FieldSet | undefined {
  const text = liveObj.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
  if (!text) return undefined;
  try {
    const last = JSON.parse(text) as Value;
    if (typeof last !== 'object' || last === null || Array.isArray(last)) return undefined;
    if ((last as Record<string, Value>)['apiVersion'] !== apiVersion) return undefined;
    const live = JSON.parse(JSON.stringify(liveObj)) as Value;
    const set = toFieldSet(last, atom);
    const c = compareValuesTyped(last, live, atom);
    return set.difference(c.modified).difference(c.added).difference(c.removed);
  } catch {
    return undefined;
  }
}

/** The annotation's new value: the applied configuration without the annotation, as Go encodes it. */
export function buildLastApplied(applied: Readonly<Record<string, unknown>>): string {
  const config = JSON.parse(JSON.stringify(applied)) as Record<string, Value>;
  const meta = config['metadata'];
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    const ann = (meta as Record<string, Value>)['annotations'];
    if (ann && typeof ann === 'object' && !Array.isArray(ann)) {
      const rest = { ...(ann as Record<string, Value>) };
      delete rest[LAST_APPLIED_ANNOTATION];
      (meta as Record<string, Value>)['annotations'] = rest;
    }
  }
  return goJSON(config) + '\n';
}
