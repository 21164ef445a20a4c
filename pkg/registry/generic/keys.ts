// Storage keys (k8s.io/apiserver registry/generic/registry/store.go key funcs):
//   cluster-scoped  <prefix>/<group>/<resource>/<name>
//   namespaced      <prefix>/<group>/<resource>/<namespace>/<name>
// Collection prefixes end with "/" so that `ns` never matches `ns-other`.

import { newBadRequest } from '../../apis/meta/errors.js';
import { isValidPathSegmentName } from '../../apis/meta/validation.js';

export class KeyFunctions {
  private readonly root: string;

  constructor(
    keyPrefix: string,
    group: string,
    resource: string,
    private readonly namespaced: boolean,
  ) {
    this.root = `${keyPrefix.replace(/\/+$/, '')}/${group}/${resource}/`;
  }

  /** The prefix of every object of the resource, in every namespace. */
  rootPrefix(): string {
    return this.root;
  }

  /** The prefix a list reads: one namespace, or everything when `namespace` is ''. */
  collectionPrefix(namespace: string): string {
    return this.namespaced && namespace ? `${this.root}${namespace}/` : this.root;
  }

  /** The key of one object; a 400 when the name (or a needed namespace) is unusable. */
  objectKey(namespace: string, name: string): string {
    if (this.namespaced && !namespace) throw newBadRequest('Namespace parameter required.');
    if (!name) throw newBadRequest('Name parameter required.');
    // The messages (and their arrays) only for a name that has something to report.
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) {
      const msgs = isValidPathSegmentName(name);
      if (msgs.length > 0)
        throw newBadRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${msgs.join(';')}`);
    }
    return this.namespaced ? `${this.root}${namespace}/${name}` : `${this.root}${name}`;
  }
}
