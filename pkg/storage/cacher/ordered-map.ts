// A map whose keys can also be walked in byte order from any point: the watch
// cache's current state. Lists read ranges of it, gets read single keys. Keys are
// kept sorted in chunks of bounded size (a flat B+-tree leaf level), so inserting
// into 100 000 keys moves a few hundred pointers instead of all of them, and a
// range can be counted from chunk sizes without visiting its keys.

const MAX_CHUNK = 512;

/** Keys are ASCII storage paths, so `<` is byte order (what etcd and SQLite sort by). */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Position {
  readonly chunk: number;
  readonly index: number;
}

export class OrderedMap<V> {
  private readonly values = new Map<string, V>();
  /** Non-empty sorted chunks; every key of chunk i sorts before every key of chunk i+1. */
  private chunks: string[][] = [];

  get size(): number {
    return this.values.size;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  set(key: string, value: V): void {
    if (!this.values.has(key)) this.insertKey(key);
    this.values.set(key, value);
  }

  delete(key: string): boolean {
    if (!this.values.delete(key)) return false;
    const { chunk, index } = this.position(key);
    const keys = this.chunks[chunk] as string[];
    keys.splice(index, 1);
    if (keys.length === 0) this.chunks.splice(chunk, 1);
    return true;
  }

  clear(): void {
    this.values.clear();
    this.chunks = [];
  }

  /** Entries with start <= key < end ('' end = no bound), in key order. */
  *range(start: string, end: string): Generator<[string, V]> {
    let { chunk, index } = this.position(start);
    for (; chunk < this.chunks.length; chunk++, index = 0) {
      const keys = this.chunks[chunk] as string[];
      for (; index < keys.length; index++) {
        const key = keys[index] as string;
        if (end !== '' && key >= end) return;
        yield [key, this.values.get(key) as V];
      }
    }
  }

  /** How many keys lie in [start, end) ('' end = no bound), without visiting them. */
  count(start: string, end: string): number {
    const from = this.position(start);
    const to = end === '' ? { chunk: this.chunks.length, index: 0 } : this.position(end);
    if (to.chunk < from.chunk || (to.chunk === from.chunk && to.index <= from.index)) return 0;
    if (from.chunk === to.chunk) return to.index - from.index;
    let n = (this.chunks[from.chunk] as string[]).length - from.index;
    for (let c = from.chunk + 1; c < to.chunk; c++) n += (this.chunks[c] as string[]).length;
    return n + to.index;
  }

  /** Where `key` is or would be inserted: the first key >= `key`. */
  private position(key: string): Position {
    const chunks = this.chunks;
    // The first chunk whose last key is >= key.
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const keys = chunks[mid] as string[];
      if ((keys[keys.length - 1] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunk: lo, index: 0 };
    return { chunk: lo, index: lowerBound(chunks[lo] as string[], key) };
  }

  private insertKey(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      return;
    }
    let { chunk, index } = this.position(key);
    // Past the last key: append to the last chunk.
    if (chunk === this.chunks.length) {
      chunk--;
      index = (this.chunks[chunk] as string[]).length;
    }
    const keys = this.chunks[chunk] as string[];
    keys.splice(index, 0, key);
    if (keys.length > MAX_CHUNK) {
      const upper = keys.splice(keys.length >>> 1);
      this.chunks.splice(chunk + 1, 0, upper);
    }
  }
}
