// Wiring of the self-service reviews (`kubectl auth can-i`, `can-i --list`, `whoami`):
// SelfSubjectAccessReview and SelfSubjectRulesReview of authorization.k8s.io/v1 and
// SelfSubjectReview of authentication.k8s.io/v1, all answered by the authorizer chain
// that decides real requests. Served whenever the server runs, host cluster or not:
// a client that reaches it directly (standalone, also with --host-kubeconfig, or the
// management path of an aggregated server) has no other place to ask. Behind the
// host's aggregator nothing changes: the host's kube-apiserver serves these groups
// itself, the aggregator proxies only this server's group version here, and takes
// only that group version from this server's discovery; its OpenAPI controllers are
// given the API group alone (pkg/apiserver/documents.ts). Every other client finds the
// reviews in OpenAPI as kube-apiserver publishes them (pkg/apiserver/openapi/review-schemas.ts).

import type { PlatformAuthorization } from '../authorization/index.js';
import { RulesResolver } from '../authorization/rules-review.js';
import { SelfSubjectReviewStorage } from '../registry/authentication/selfsubjectreview/storage.js';
import { SelfSubjectAccessReviewStorage } from '../registry/authorization/selfsubjectaccessreview/storage.js';
import { SelfSubjectRulesReviewStorage } from '../registry/authorization/selfsubjectrulesreview/storage.js';
import type { ResourceInfo, RESTStorage } from '../registry/rest/interfaces.js';
import { subresourcesOf } from '../apiserver/discovery/discovery.js';

/** A resource's info with the subresources its storage serves (accesskeys, kubeconfig) added. */
function withServedSubresources(storage: RESTStorage): ResourceInfo {
  return { ...storage.info, subresources: subresourcesOf(storage) };
}

export function selfReviewResources(
  group: string,
  authorization: PlatformAuthorization,
  resources: readonly RESTStorage[],
): RESTStorage[] {
  const reviews: RESTStorage[] = [];
  // Every resource the server answers, for the rules review to ask the chain about.
  const served = (): ResourceInfo[] => [...resources, ...reviews].map(withServedSubresources);
  const scopeOf = (g: string, resource: string): 'Cluster' | 'Namespaced' | undefined => {
    const info = [...resources, ...reviews].find(
      (r) => r.info.group === g && r.info.resource === resource,
    )?.info;
    if (!info) return undefined;
    return info.namespaced ? 'Namespaced' : 'Cluster';
  };
  reviews.push(
    new SelfSubjectAccessReviewStorage(authorization.authorizer, scopeOf),
    new SelfSubjectRulesReviewStorage(
      new RulesResolver(authorization.authorizer, authorization.callers, group, served),
    ),
    new SelfSubjectReviewStorage(group),
  );
  return reviews;
}
