// POST selfsubjectaccessreviews: "may I?" (`kubectl auth can-i`), answered by the
// very authorizer that decides the caller's real requests, with the caller's own
// identity (key scope, teams, administrators, and, for a named object, that
// object's owner and access rules). As upstream's
// pkg/registry/authorization/selfsubjectaccessreview: exactly one of
// resourceAttributes and nonResourceAttributes, empty metadata, and
// allowed/denied/reason from the decision. Nothing is stored.

import { protobufDecoder, type ProtobufDecoder } from '../../../apis/meta/protobuf.js';
import { newInvalid } from '../../../apis/meta/errors.js';
import { invalid, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import {
  selfSubjectAccessReviewInfo,
  selfSubjectAccessReviewProtobuf,
  type NonResourceAttributes,
  type ResourceAttributes,
  type SelfSubjectAccessReview,
  type SubjectAccessReviewStatus,
} from '../../../apis/authorization/v1/types.js';
import {
  nonResourceAttributes,
  type Attributes,
  type Authorizer,
} from '../../../authorization/interfaces.js';
import type { CreateOptions, RequestContext, ResourceInfo, RESTStorage } from '../../rest/interfaces.js';
import { isEmptyMetadata, reviewBody } from '../../rest/review.js';

/** Is `resource` of `group` served here and cluster scoped? (undefined: not known here) */
export type ScopeOf = (group: string, resource: string) => 'Cluster' | 'Namespaced' | undefined;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export class SelfSubjectAccessReviewStorage implements RESTStorage {
  readonly info: ResourceInfo = selfSubjectAccessReviewInfo;
  private readonly decoder: ProtobufDecoder = protobufDecoder(selfSubjectAccessReviewProtobuf);

  constructor(
    private readonly authorizer: Authorizer,
    private readonly scopeOf: ScopeOf = () => undefined,
  ) {}

  decodeProtobuf(raw: Buffer): unknown {
    return this.decoder(raw);
  }

  async create(ctx: RequestContext, body: unknown, _options: CreateOptions): Promise<KubeObject> {
    const { metadata, spec } = reviewBody(body, this.info);
    const resource = isObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
    const nonResource = isObject(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : undefined;
    const errs: FieldError[] = [];
    if (resource && nonResource) {
      errs.push(
        invalid(
          'spec.nonResourceAttributes',
          nonResource,
          'cannot be specified in combination with resourceAttributes',
        ),
      );
    }
    if (!resource && !nonResource) {
      errs.push(
        invalid(
          'spec.resourceAttributes',
          null,
          'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        ),
      );
    }
    if (!isEmptyMetadata(metadata)) errs.push(invalid('metadata', metadata, 'must be empty'));
    if (errs.length > 0) throw newInvalid({ group: this.info.group, kind: this.info.kind }, '', errs);

    const attrs = resource
      ? this.resourceAttributes(ctx, resource)
      : { user: ctx.user, ...nonResourceAttributes(str(nonResource?.['verb']), str(nonResource?.['path'])) };
    const result = await this.authorizer.authorize(attrs);
    // The chain's own default denial carries no reason: nobody allowed it, which
    // upstream reports as neither allowed nor denied (no opinion). An authorizer that
    // refuses (a key's scope, the host's explicit denial) says why: denied.
    const denied = result.decision === 'deny' && (result.reason ?? '') !== '';
    const status: SubjectAccessReviewStatus = { allowed: result.decision === 'allow' };
    if (denied) status.denied = true;
    if (result.reason) status.reason = result.reason;

    const review: SelfSubjectAccessReview = {
      apiVersion: `${this.info.group}/${this.info.version}`,
      kind: 'SelfSubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec: resource
        ? { resourceAttributes: echoResource(resource) }
        : { nonResourceAttributes: echoNonResource(nonResource ?? {}) },
      status,
    };
    return review as unknown as KubeObject;
  }

  private resourceAttributes(ctx: RequestContext, given: Record<string, unknown>): Attributes {
    const group = str(given['group']);
    const resource = str(given['resource']);
    // A cluster-scoped resource has no namespace in a real request: kubectl may still
    // send its current namespace, which must not change the answer.
    const namespace = this.scopeOf(group, resource) === 'Cluster' ? '' : str(given['namespace']);
    return {
      user: ctx.user,
      verb: str(given['verb']),
      isResourceRequest: true,
      path: '',
      apiGroup: group,
      apiVersion: str(given['version']),
      resource,
      subresource: str(given['subresource']),
      namespace,
      name: str(given['name']),
    };
  }
}

const RESOURCE_FIELDS = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'] as const;

/**
 * The selectors of a list or watch asked about (authorization.k8s.io/v1 since 1.31):
 * returned as given, as upstream returns the spec, though the authorizers here do not
 * narrow their decision by them (as RBAC does not).
 */
const SELECTOR_FIELDS = ['fieldSelector', 'labelSelector'] as const;

function echoResource(given: Record<string, unknown>): ResourceAttributes {
  const out: ResourceAttributes = {};
  for (const field of RESOURCE_FIELDS) if (str(given[field]) !== '') out[field] = str(given[field]);
  for (const field of SELECTOR_FIELDS) {
    const selector = given[field];
    if (isObject(selector)) out[field] = selector;
  }
  return out;
}

function echoNonResource(given: Record<string, unknown>): NonResourceAttributes {
  const out: NonResourceAttributes = {};
  if (str(given['path']) !== '') out.path = str(given['path']);
  if (str(given['verb']) !== '') out.verb = str(given['verb']);
  return out;
}
