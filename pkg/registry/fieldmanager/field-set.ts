// Sets of field paths (structured-merge-diff fieldpath/set.go): a trie whose node
// holds the elements that end a path there ("members") and the subtrees below
// ("children"), both sorted by element order. The set operations keep smd's
// exact quirks, because managedFields bytes and conflicts depend on them: a
// node can be both a member and have children; Difference subtracts members only
// at the same level; RecursiveDifference also drops a subtree whose root is a
// member of the other set; Intersection and Difference drop empty subtrees,
// Union keeps them.

import { compareElements, equalElements, type Path, type PathElement } from './path.js';

export interface SetNode {
  readonly element: PathElement;
  readonly set: FieldSet;
}

function search<T>(items: readonly T[], pe: PathElement, elementOf: (t: T) => PathElement): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareElements(elementOf(items[mid] as T), pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const self = (pe: PathElement): PathElement => pe;
const nodeElement = (n: SetNode): PathElement => n.element;

export class FieldSet {
  /** Elements that end a path at this node, sorted. */
  readonly members: PathElement[];
  /** Subtrees below this node, sorted by their element. */
  readonly children: SetNode[];

  constructor(members: PathElement[] = [], children: SetNode[] = []) {
    this.members = members;
    this.children = children;
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (the empty path is ignored, as smd ignores it). */
  insert(p: Path): void {
    if (p.length === 0) return;
    const last = p.length - 1;
    const parent = p.slice(0, last).reduce<FieldSet>((s, pe) => s.descend(pe), this);
    parent.insertMember(p[last] as PathElement);
  }

  insertMember(pe: PathElement): void {
    const at = search(this.members, pe, self);
    const found = this.members[at];
    if (found && equalElements(found, pe)) return;
    this.members.splice(at, 0, pe);
  }

  hasMember(pe: PathElement): boolean {
    const found = this.members[search(this.members, pe, self)];
    return found !== undefined && equalElements(found, pe);
  }

  /** The child set under an element, created when missing. */
  descend(pe: PathElement): FieldSet {
    const at = search(this.children, pe, nodeElement);
    const found = this.children[at];
    if (found && equalElements(found.element, pe)) return found.set;
    const set = new FieldSet();
    this.children.splice(at, 0, { element: pe, set });
    return set;
  }

  child(pe: PathElement): FieldSet | undefined {
    const found = this.children[search(this.children, pe, nodeElement)];
    return found && equalElements(found.element, pe) ? found.set : undefined;
  }

  /** The paths under an element, relative to it (an empty set when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.child(pe) ?? new FieldSet();
  }

  has(p: Path): boolean {
    if (p.length === 0) return false;
    const last = p.length - 1;
    const parent = p.slice(0, last).reduce<FieldSet | undefined>((s, pe) => s?.child(pe), this);
    return parent?.hasMember(p[last] as PathElement) ?? false;
  }

  empty(): boolean {
    return this.members.length === 0 && this.children.every((c) => c.set.empty());
  }

  size(): number {
    return this.members.length + this.children.reduce((n, c) => n + c.set.size(), 0);
  }

  union(o: FieldSet): FieldSet {
    return new FieldSet(
      mergeSorted(this.members, o.members, 'union'),
      unionChildren(this.children, o.children),
    );
  }

  intersection(o: FieldSet): FieldSet {
    const children: SetNode[] = [];
    zip(this.children, o.children, (a, b) => {
      if (!a || !b) return;
      const s = a.set.intersection(b.set);
      if (!s.empty()) children.push({ element: a.element, set: s });
    });
    return new FieldSet(mergeSorted(this.members, o.members, 'intersection'), children);
  }

  difference(o: FieldSet): FieldSet {
    const children: SetNode[] = [];
    zip(this.children, o.children, (a, b) => {
      if (!a) return;
      if (!b) {
        children.push(a);
        return;
      }
      const s = a.set.difference(b.set);
      if (!s.empty()) children.push({ element: a.element, set: s });
    });
    return new FieldSet(mergeSorted(this.members, o.members, 'difference'), children);
  }

  /** Like difference, and a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    const children: SetNode[] = [];
    zip(this.children, o.children, (a, b) => {
      if (!a || o.hasMember(a.element)) return;
      if (!b) {
        children.push(a);
        return;
      }
      const s = a.set.recursiveDifference(b.set);
      if (!s.empty()) children.push({ element: a.element, set: s });
    });
    return new FieldSet(mergeSorted(this.members, o.members, 'difference'), children);
  }

  /** Only the members that are not also the root of a subtree, at every level. */
  leaves(): FieldSet {
    return new FieldSet(
      this.members.filter((m) => !this.child(m)),
      this.children.map((c) => ({ element: c.element, set: c.set.leaves() })),
    );
  }

  equals(o: FieldSet): boolean {
    if (this.members.length !== o.members.length || this.children.length !== o.children.length) return false;
    if (!this.members.every((m, i) => equalElements(m, o.members[i] as PathElement))) return false;
    return this.children.every((c, i) => {
      const oc = o.children[i] as SetNode;
      return equalElements(c.element, oc.element) && c.set.equals(oc.set);
    });
  }

  /** Every path, members of a node before its subtrees (smd's iteration order). */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = this.members.map((m) => [...prefix, m]);
    for (const c of this.children) out.push(...c.set.paths([...prefix, c.element]));
    return out;
  }
}

function mergeSorted(
  a: readonly PathElement[],
  b: readonly PathElement[],
  op: 'union' | 'intersection' | 'difference',
): PathElement[] {
  const out: PathElement[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = compareElements(a[i] as PathElement, b[j] as PathElement);
    if (c < 0) {
      if (op !== 'intersection') out.push(a[i] as PathElement);
      i++;
    } else if (c > 0) {
      if (op === 'union') out.push(b[j] as PathElement);
      j++;
    } else {
      if (op !== 'difference') out.push(a[i] as PathElement);
      i++;
      j++;
    }
  }
  if (op !== 'intersection') out.push(...a.slice(i));
  if (op === 'union') out.push(...b.slice(j));
  return out;
}

/** Walks two sorted child lists in step, pairing equal elements. */
function zip(
  a: readonly SetNode[],
  b: readonly SetNode[],
  f: (x: SetNode | undefined, y: SetNode | undefined) => void,
): void {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (!x) {
      f(undefined, y);
      j++;
    } else if (!y) {
      f(x, undefined);
      i++;
    } else {
      const c = compareElements(x.element, y.element);
      if (c < 0) {
        f(x, undefined);
        i++;
      } else if (c > 0) {
        f(undefined, y);
        j++;
      } else {
        f(x, y);
        i++;
        j++;
      }
    }
  }
}

function unionChildren(a: readonly SetNode[], b: readonly SetNode[]): SetNode[] {
  const out: SetNode[] = [];
  zip(a, b, (x, y) => {
    if (x && y) out.push({ element: x.element, set: x.set.union(y.set) });
    else out.push((x ?? y) as SetNode);
  });
  return out;
}
