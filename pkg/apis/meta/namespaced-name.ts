// `<namespace>/<name>`, the way flags and CLI arguments name one namespaced
// object (a Secret, a virtual cluster). The rule is the objects' own
// (k8s.io/apimachinery pkg/api/validation): a namespace is a DNS-1123 label, so it
// has no dots; a name is a DNS-1123 subdomain, so it may have them
// (`vc-dev/my.cluster`). Exactly one '/', as cache.SplitMetaNamespaceKey wants.
// Anything else is refused here rather than by the host later, where the error
// would name a request rather than the flag.

import { isDNS1123Label, isDNS1123Subdomain } from './validation.js';

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** The namespace and name of `text`, or undefined when it is not `<namespace>/<name>`. */
export function parseNamespacedName(text: string): NamespacedName | undefined {
  const parts = text.split('/');
  if (parts.length !== 2) return undefined;
  const [namespace = '', name = ''] = parts;
  if (isDNS1123Label(namespace).length > 0 || isDNS1123Subdomain(name).length > 0) return undefined;
  return { namespace, name };
}
