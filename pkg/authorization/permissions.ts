// "May this caller do that?" for the checks that run after authorization
// (admission, list filtering): the question as Attributes, answered by the strict
// authorizer chain, and the Kubernetes wording of a "no".

import type { AuthenticatedUser } from '../authentication/user/user.js';
import type { Attributes, Authorizer } from './interfaces.js';

export interface ResourceQuestion {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

export function resourceAttributes(user: AuthenticatedUser, q: ResourceQuestion): Attributes {
  return {
    user,
    verb: q.verb,
    isResourceRequest: true,
    path: '',
    apiGroup: q.group,
    apiVersion: '',
    resource: q.resource,
    subresource: q.subresource ?? '',
    namespace: q.namespace ?? '',
    name: q.name ?? '',
  };
}

export class Permissions {
  constructor(private readonly authorizer: Authorizer) {}

  async can(user: AuthenticatedUser, q: ResourceQuestion): Promise<boolean> {
    return (await this.authorizer.authorize(resourceAttributes(user, q))).decision === 'allow';
  }
}

/** `User "x" cannot get resource "teams" in API group "g" at the cluster scope` (Kubernetes' wording). */
export function deniedMessage(attrs: Attributes): string {
  const user = JSON.stringify(attrs.user.name);
  if (!attrs.isResourceRequest) return `User ${user} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const head = `User ${user} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)}`;
  return attrs.namespace
    ? `${head} in the namespace ${JSON.stringify(attrs.namespace)}`
    : `${head} at the cluster scope`;
}
