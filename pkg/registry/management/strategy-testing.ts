// Test helpers for the management strategies: a request context and the order in
// which the generic Store calls a strategy (prepare, schema + strategy validation,
// storage round trip, decorate), so tests exercise what a client would see.

import { fieldErrorString } from '../../apis/meta/field-errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { compileSchema } from '../../apis/schema/compile.js';
import type { RequestContext, Strategy } from '../rest/interfaces.js';

export function testContext(name = 'admin'): RequestContext {
  return { user: { name, groups: ['system:authenticated'] }, namespace: '', warnings: [] };
}

/** What storage hands back: a copy, never the object that was written. */
export function roundTrip<T>(obj: T): T {
  return JSON.parse(JSON.stringify(obj)) as T;
}

export interface WriteResult {
  /** Error strings as a 422 would list them; empty when the write is valid. */
  readonly errors: string[];
  /** The object as storage holds it. */
  readonly stored: KubeObject;
  /** The object as the write's response shows it. */
  readonly response: KubeObject;
}

export async function simulateCreate(
  strategy: Strategy,
  body: KubeObject,
  ctx: RequestContext = testContext(),
): Promise<WriteResult> {
  const obj = structuredClone(body);
  await strategy.prepareForCreate(ctx, obj);
  const errors = [...compileSchema(strategy.schema).validate(obj), ...strategy.validate(ctx, obj)].map(
    fieldErrorString,
  );
  const stored = roundTrip(obj);
  const response = strategy.decorate ? strategy.decorate(roundTrip(stored), true, ctx) : stored;
  return { errors, stored, response };
}

export async function simulateUpdate(
  strategy: Strategy,
  body: KubeObject,
  old: KubeObject,
  ctx: RequestContext = testContext(),
  passContext = true,
): Promise<WriteResult> {
  const obj = structuredClone(body);
  await strategy.prepareForUpdate(ctx, obj, roundTrip(old));
  const errors = [
    ...compileSchema(strategy.schema).validate(obj),
    ...strategy.validateUpdate(ctx, obj, old),
  ].map(fieldErrorString);
  const stored = roundTrip(obj);
  const response = strategy.decorate
    ? strategy.decorate(roundTrip(stored), false, passContext ? ctx : undefined)
    : stored;
  return { errors, stored, response };
}

/** What a GET, a list item or a watch event shows. */
export function read(strategy: Strategy, stored: KubeObject): KubeObject {
  return strategy.decorate ? strategy.decorate(roundTrip(stored), false) : stored;
}
