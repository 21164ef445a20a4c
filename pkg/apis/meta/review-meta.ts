// The metadata of a review (authorization.k8s.io's access and rules reviews,
// authentication.k8s.io's SelfSubjectReview): upstream embeds an ObjectMeta that is
// never filled, so every answer carries `metadata: {creationTimestamp: null}`.
// Kept here, beneath both groups, so neither group's types import the other's.

/** A review is never stored: its metadata is empty, as upstream answers it. */
export interface ReviewMeta {
  creationTimestamp: string | null;
}
