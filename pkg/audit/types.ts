// The audit.k8s.io/v1 types as kube-apiserver writes and reads them
// (k8s.io/apiserver/pkg/apis/audit/v1/types.go): the Policy an operator writes,
// and the Event and EventList the backends receive. Field order in the interfaces is
// the order upstream's encoder writes them in; event.ts builds events in that order.

export const AUDIT_API_VERSION = 'audit.k8s.io/v1';

/** The header that carries a request's audit ID (set by the first server that sees it). */
export const AUDIT_ID_HEADER = 'Audit-ID';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];

export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** Level.Less: None < Metadata < Request < RequestResponse. */
export function levelAtLeast(level: Level, least: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(least);
}

export interface GroupResources {
  readonly group?: string;
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
}

export interface PolicyRule {
  readonly level: Level;
  readonly users?: readonly string[];
  readonly userGroups?: readonly string[];
  readonly verbs?: readonly string[];
  readonly resources?: readonly GroupResources[];
  readonly namespaces?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
  readonly omitStages?: readonly Stage[];
  /** Unset: the policy's omitManagedFields stands. */
  readonly omitManagedFields?: boolean;
}

export interface Policy {
  readonly rules: readonly PolicyRule[];
  readonly omitStages?: readonly Stage[];
  readonly omitManagedFields?: boolean;
}

/** authentication.k8s.io/v1 UserInfo as an event records it. */
export interface EventUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The subset of metav1.Status an event keeps (upstream copies these bounded fields). */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface Event {
  kind: 'Event';
  apiVersion: typeof AUDIT_API_VERSION;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: EventUser;
  impersonatedUser?: EventUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

export interface EventList {
  kind: 'EventList';
  apiVersion: typeof AUDIT_API_VERSION;
  metadata: Record<string, never>;
  items: Event[];
}

/** What the policy is asked about: the request's authorizer attributes (checker.go). */
export interface AuditAttributes {
  readonly user: { readonly name: string; readonly groups: readonly string[] } | undefined;
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}
