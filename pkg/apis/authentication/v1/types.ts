// authentication.k8s.io/v1 as far as this server serves it: SelfSubjectReview
// (`kubectl auth whoami`). Shapes, resource info and protobuf message follow
// k8s.io/api/authentication/v1 (types.go and generated.proto); nothing is stored.

import type { ProtobufKind } from '../../meta/protobuf.js';
import type { ReviewMeta } from '../../meta/review-meta.js';
import type { ResourceInfo } from '../../meta/resource-info.js';

export const AUTHENTICATION_GROUP = 'authentication.k8s.io';
export const AUTHENTICATION_VERSION = 'v1';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface SelfSubjectReview {
  apiVersion: string;
  kind: 'SelfSubjectReview';
  metadata: ReviewMeta;
  status: { userInfo: UserInfo };
}

export const selfSubjectReviewInfo: ResourceInfo = {
  group: AUTHENTICATION_GROUP,
  version: AUTHENTICATION_VERSION,
  resource: 'selfsubjectreviews',
  singular: 'selfsubjectreview',
  kind: 'SelfSubjectReview',
  listKind: 'SelfSubjectReviewList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: ['create'],
  subresources: [],
};

// The request carries nothing but metadata (status is the server's to fill in).
export const selfSubjectReviewProtobuf: ProtobufKind = {
  apiVersion: `${AUTHENTICATION_GROUP}/${AUTHENTICATION_VERSION}`,
  kind: 'SelfSubjectReview',
  messages: {
    SelfSubjectReview: { fields: { metadata: { type: 'ObjectMeta', id: 1 } } },
  },
};
