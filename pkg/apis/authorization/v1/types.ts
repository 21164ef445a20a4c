// authorization.k8s.io/v1 as far as this server serves it: the two self-service
// reviews (`kubectl auth can-i`, `kubectl auth can-i --list`). Shapes, resource
// infos and protobuf messages follow k8s.io/api/authorization/v1 (types.go and
// generated.proto); nothing here is stored.

import type { ProtobufKind } from '../../meta/protobuf.js';
import type { ResourceInfo } from '../../meta/resource-info.js';
import type { ReviewMeta } from '../../meta/review-meta.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const AUTHORIZATION_VERSION = 'v1';
const API_VERSION = `${AUTHORIZATION_GROUP}/${AUTHORIZATION_VERSION}`;

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  /** FieldSelectorAttributes (rawSelector or requirements), as the client sent it. */
  fieldSelector?: Record<string, unknown>;
  /** LabelSelectorAttributes (rawSelector or requirements), as the client sent it. */
  labelSelector?: Record<string, unknown>;
}

export interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

export interface SubjectAccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface SelfSubjectAccessReview {
  apiVersion: string;
  kind: 'SelfSubjectAccessReview';
  metadata: ReviewMeta;
  spec: { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: NonResourceAttributes };
  status?: SubjectAccessReviewStatus;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface SubjectRulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

export interface SelfSubjectRulesReview {
  apiVersion: string;
  kind: 'SelfSubjectRulesReview';
  metadata: ReviewMeta;
  spec: { namespace?: string };
  status?: SubjectRulesReviewStatus;
}

function reviewInfo(resource: string, kind: string): ResourceInfo {
  return {
    group: AUTHORIZATION_GROUP,
    version: AUTHORIZATION_VERSION,
    resource,
    singular: resource.slice(0, -1),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
  };
}

export const selfSubjectAccessReviewInfo: ResourceInfo = reviewInfo(
  'selfsubjectaccessreviews',
  'SelfSubjectAccessReview',
);
export const selfSubjectRulesReviewInfo: ResourceInfo = reviewInfo(
  'selfsubjectrulesreviews',
  'SelfSubjectRulesReview',
);

// Field numbers from k8s.io/api/authorization/v1/generated.proto. Status is not read:
// the server fills it in.
export const selfSubjectAccessReviewProtobuf: ProtobufKind = {
  apiVersion: API_VERSION,
  kind: 'SelfSubjectAccessReview',
  messages: {
    ResourceAttributes: {
      fields: {
        namespace: { type: 'string', id: 1 },
        verb: { type: 'string', id: 2 },
        group: { type: 'string', id: 3 },
        version: { type: 'string', id: 4 },
        resource: { type: 'string', id: 5 },
        subresource: { type: 'string', id: 6 },
        name: { type: 'string', id: 7 },
        fieldSelector: { type: 'FieldSelectorAttributes', id: 8 },
        labelSelector: { type: 'LabelSelectorAttributes', id: 9 },
      },
    },
    // The selectors of a list or watch asked about (1.31+); the requirements are
    // meta/v1's FieldSelectorRequirement and LabelSelectorRequirement.
    FieldSelectorAttributes: {
      fields: {
        rawSelector: { type: 'string', id: 1 },
        requirements: { rule: 'repeated', type: 'SelectorRequirement', id: 2 },
      },
    },
    LabelSelectorAttributes: {
      fields: {
        rawSelector: { type: 'string', id: 1 },
        requirements: { rule: 'repeated', type: 'SelectorRequirement', id: 2 },
      },
    },
    // Both requirement messages have these fields and numbers.
    SelectorRequirement: {
      fields: {
        key: { type: 'string', id: 1 },
        operator: { type: 'string', id: 2 },
        values: { rule: 'repeated', type: 'string', id: 3 },
      },
    },
    NonResourceAttributes: { fields: { path: { type: 'string', id: 1 }, verb: { type: 'string', id: 2 } } },
    SelfSubjectAccessReviewSpec: {
      fields: {
        resourceAttributes: { type: 'ResourceAttributes', id: 1 },
        nonResourceAttributes: { type: 'NonResourceAttributes', id: 2 },
      },
    },
    SelfSubjectAccessReview: {
      fields: {
        metadata: { type: 'ObjectMeta', id: 1 },
        spec: { type: 'SelfSubjectAccessReviewSpec', id: 2 },
      },
    },
  },
};

export const selfSubjectRulesReviewProtobuf: ProtobufKind = {
  apiVersion: API_VERSION,
  kind: 'SelfSubjectRulesReview',
  messages: {
    SelfSubjectRulesReviewSpec: { fields: { namespace: { type: 'string', id: 1 } } },
    SelfSubjectRulesReview: {
      fields: {
        metadata: { type: 'ObjectMeta', id: 1 },
        spec: { type: 'SelfSubjectRulesReviewSpec', id: 2 },
      },
    },
  },
};
