// A RESTStorage that forwards to another, for wrappers that change one or two
// verbs (list filtering) and must keep the rest exactly as the wrapped resource
// has them: a verb it lacks stays absent (the HTTP layer answers 405 for it), and
// one it has keeps its `this`. The table below has a mapped type over every
// member of RESTStorage, so a member added to the interface and not forwarded
// here fails the build, instead of silently disappearing behind every wrapper.

import type { RESTStorage } from './interfaces.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** How to read each member of a wrapped T; every member must have an entry. */
type Forwarders<T> = { readonly [K in keyof T]-?: (from: T) => T[K] };

const FORWARDERS: Forwarders<RESTStorage> = {
  info: (s) => s.info,
  schema: (s) => s.schema,
  create: (s) => s.create?.bind(s),
  get: (s) => s.get?.bind(s),
  list: (s) => s.list?.bind(s),
  update: (s) => s.update?.bind(s),
  patch: (s) => s.patch?.bind(s),
  delete: (s) => s.delete?.bind(s),
  deleteCollection: (s) => s.deleteCollection?.bind(s),
  watch: (s) => s.watch?.bind(s),
  convertToTable: (s) => s.convertToTable?.bind(s),
  subresources: (s) => s.subresources,
  decodeProtobuf: (s) => s.decodeProtobuf?.bind(s),
};

function forward<T, K extends keyof T>(table: Forwarders<T>, out: Mutable<T>, from: T, key: K): void {
  const value = table[key](from);
  if (value !== undefined) out[key] = value;
}

/**
 * A copy of `storage`'s members, methods bound to it and absent ones left out;
 * the caller replaces the members it changes.
 */
export function delegateTo(storage: RESTStorage): Mutable<RESTStorage> {
  const out = { info: storage.info } as Mutable<RESTStorage>;
  for (const key of Object.keys(FORWARDERS) as (keyof RESTStorage)[]) forward(FORWARDERS, out, storage, key);
  return out;
}
