// tokenGeneration: a User's counter that, when it grows, invalidates every token
// issued to the user before. A key records the generation it was made under (in
// an annotation the server owns); tokens carry it as a claim.

import { isObject, type KubeObject } from '../apis/meta/types.js';

/** The User's `spec.tokenGeneration` (0 when unset). */
export function userTokenGeneration(user: KubeObject | undefined): number {
  const spec = user?.['spec'];
  const gen = isObject(spec) ? spec['tokenGeneration'] : undefined;
  return typeof gen === 'number' && Number.isFinite(gen) ? gen : 0;
}

/** The generation recorded in a key's annotation (0 when absent: keys older than the annotation). */
export function keyTokenGeneration(key: KubeObject, annotation: string): number {
  const raw = key.metadata.annotations?.[annotation];
  if (raw === undefined || !/^\d+$/.test(raw)) return 0;
  return Number(raw);
}
