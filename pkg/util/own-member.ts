// Reading and writing a decoded JSON object's members as Go reads and writes a map.
//
// Go maps have no prototype: a key named `constructor`, `toString` or `__proto__` is
// as ordinary as any other (all valid label, annotation and SharedSecret data keys).
// A plain object's `in`, indexing and assignment see Object.prototype instead: `in`
// and indexing find inherited members, and `obj['__proto__'] = v` replaces the
// prototype rather than adding a member. Code that merges request bodies reads and
// writes members only through these two.

/** The member `key` of `obj`, undefined unless `obj` holds it itself. */
export function ownMember<T>(obj: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets `key` on `obj` as its own data member (`__proto__` included). */
export function setOwn<T>(obj: Record<string, T>, key: string, value: NoInfer<T>): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
