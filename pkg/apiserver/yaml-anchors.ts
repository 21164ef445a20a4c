// Which anchored node each YAML alias names, found in one walk of the document.
//
// goyaml.v2's parser records an anchor when it reaches the anchored node (before the
// node's contents) and an alias names the node last anchored under its name at that
// point: a later `&a` replaces an earlier one for the aliases after it only (decode.go
// `alias`, parser `anchor`). The YAML library's own `alias.resolve(doc)` finds the same
// node by walking the whole document on every call, so a body of many aliases cost
// aliases × nodes; here every alias is resolved once, in document order, and looked up
// afterwards. The walk is iterative: no body can exhaust the stack.

import { isAlias, isMap, isPair, isSeq, type Alias, type Document, type Node as YamlNode } from 'yaml';

export class AnchorIndex {
  private readonly targets = new Map<Alias, YamlNode>();

  constructor(doc: Document) {
    const current = new Map<string, YamlNode>();
    // Pending nodes, last first: a collection's items are pushed in reverse so they pop in order.
    const pending: unknown[] = [doc.contents];
    while (pending.length > 0) {
      const node = pending.pop();
      if (isAlias(node)) {
        const target = current.get(node.source);
        if (target !== undefined) this.targets.set(node, target);
        continue;
      }
      if (isPair(node)) {
        pending.push(node.value, node.key);
        continue;
      }
      if (node === null || typeof node !== 'object') continue;
      const anchor = (node as YamlNode).anchor;
      if (anchor !== undefined) current.set(anchor, node as YamlNode);
      if (isMap(node) || isSeq(node)) {
        const items = node.items as unknown[];
        for (let i = items.length - 1; i >= 0; i--) pending.push(items[i]);
      }
    }
  }

  /** The node an alias names, or undefined when no anchor of its name comes before it. */
  target(alias: Alias): YamlNode | undefined {
    return this.targets.get(alias);
  }
}
