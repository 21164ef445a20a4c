// Where a virtual cluster instance lives and how it is reached: its project comes
// from its namespace (`<prefix><project>`, --project-namespace-prefix), and its
// ingress host is the instance's own choice or `<name>-<project>.<suffix>`
// (--ingress-suffix), as upstream builds it.

import { isObject, type KubeObject } from '../../../apis/meta/types.js';

export const DEFAULT_PROJECT_NAMESPACE_PREFIX = 'p-';

/** The project a namespace belongs to, or undefined when it is not a project namespace. */
export function projectOfNamespace(namespace: string, prefix: string): string | undefined {
  if (!namespace.startsWith(prefix) || namespace.length === prefix.length) return undefined;
  return namespace.slice(prefix.length);
}

export function projectNamespace(project: string, prefix: string): string {
  return `${prefix}${project}`;
}

function ingressOf(definition: unknown): Record<string, unknown> | undefined {
  if (!isObject(definition)) return undefined;
  const accessPoint = definition['accessPoint'];
  if (!isObject(accessPoint)) return undefined;
  const ingress = accessPoint['ingress'];
  return isObject(ingress) ? ingress : undefined;
}

/** The resolved definition clients read (status.virtualCluster), falling back to spec.template. */
function definitionOf(instance: KubeObject): unknown {
  const status = instance['status'];
  if (isObject(status) && isObject(status['virtualCluster'])) return status['virtualCluster'];
  const spec = instance['spec'];
  return isObject(spec) ? spec['template'] : undefined;
}

/** True when the instance's ingress access point is switched on. */
export function ingressEnabled(instance: KubeObject): boolean {
  return ingressOf(definitionOf(instance))?.['enabled'] === true;
}

/**
 * The ingress host: the one the instance names, else `<name>-<project>.<suffix>`;
 * undefined when neither is possible (no suffix configured, or not in a project).
 */
export function ingressHost(
  instance: KubeObject,
  options: { readonly projectNamespacePrefix: string; readonly ingressSuffix: string },
): string | undefined {
  const named = ingressOf(definitionOf(instance))?.['host'];
  if (typeof named === 'string' && named !== '') return named;
  const project = projectOfNamespace(instance.metadata.namespace ?? '', options.projectNamespacePrefix);
  const suffix = options.ingressSuffix.replace(/^\.+/, '');
  if (!project || !suffix) return undefined;
  return `${instance.metadata.name ?? ''}-${project}.${suffix}`;
}
