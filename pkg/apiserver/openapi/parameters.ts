// Query parameters of the API's operations, described for people reading the
// OpenAPI documents. Which operation takes which follows the options types of
// meta/v1 (ListOptions, CreateOptions, UpdateOptions, PatchOptions, DeleteOptions);
// `force` only on PATCH, where it takes part in server-side apply.

export interface QueryParameter {
  readonly name: string;
  readonly type: 'string' | 'boolean' | 'integer';
  readonly description: string;
}

function param(name: string, type: QueryParameter['type'], description: string): QueryParameter {
  return { name, type, description };
}

const P = {
  allowWatchBookmarks: param(
    'allowWatchBookmarks',
    'boolean',
    'Ask for BOOKMARK events on a watch: events that only carry a resourceVersion, marking that everything up to it was sent. Clients must cope with not getting any. Ignored for lists.',
  ),
  continue: param(
    'continue',
    'string',
    'The token from the previous page of a limited list, to fetch the next page. Tokens expire: an expired one gets 410 Gone, and the list must start again.',
  ),
  dryRun: param(
    'dryRun',
    'string',
    'When `All`, the request is checked and processed in full but nothing is stored. No other value is allowed.',
  ),
  fieldManager: param(
    'fieldManager',
    'string',
    'Name of the actor making the change, recorded in managedFields. At most 128 printable characters; defaults to the start of the User-Agent. Required for apply patches (application/apply-patch+yaml).',
  ),
  force: param(
    'force',
    'boolean',
    'For apply patches only: take over the fields the applied configuration sets that other managers own, instead of failing with a conflict. Must be unset for other patches.',
  ),
  fieldSelector: param(
    'fieldSelector',
    'string',
    'Select objects by field: `metadata.name` and `metadata.namespace` with `=`, `==` or `!=`, comma separated. Defaults to everything.',
  ),
  fieldValidation: param(
    'fieldValidation',
    'string',
    'What to do with fields the schema does not know: `Ignore` drops them silently, `Warn` (the default) drops them and answers with a warning for each, `Strict` rejects the request.',
  ),
  gracePeriodSeconds: param(
    'gracePeriodSeconds',
    'integer',
    'Seconds to wait before deleting. Objects of this API are deleted at once (or when their finalizers are gone), so only zero is meaningful.',
  ),
  labelSelector: param(
    'labelSelector',
    'string',
    'Select objects by label, e.g. `team=dev,tier!=test` or `env in (a,b)`. Defaults to everything.',
  ),
  limit: param(
    'limit',
    'integer',
    'Most objects to return; when there are more, the response carries a continue token for the next page.',
  ),
  orphanDependents: param(
    'orphanDependents',
    'boolean',
    'Deprecated: use propagationPolicy. When true, dependents are orphaned; when false, they are deleted in the background.',
  ),
  pretty: param('pretty', 'string', 'When `true`, the output is indented.'),
  propagationPolicy: param(
    'propagationPolicy',
    'string',
    'How the garbage collector treats dependents: `Orphan` leaves them, `Background` deletes them after the object, `Foreground` deletes them before the object.',
  ),
  resourceVersion: param(
    'resourceVersion',
    'string',
    'Which state to read. Unset: the latest. `0`: any state (may be stale). Another value: state at least that new, or exactly that version with resourceVersionMatch=Exact. For a watch, events after this version.',
  ),
  resourceVersionMatch: param(
    'resourceVersionMatch',
    'string',
    'How resourceVersion applies to a list: `NotOlderThan` or `Exact`. Only with resourceVersion set.',
  ),
  sendInitialEvents: param(
    'sendInitialEvents',
    'boolean',
    'On a watch, start with an ADDED event for every current object, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` (when bookmarks are allowed). Requires resourceVersionMatch=NotOlderThan.',
  ),
  timeoutSeconds: param(
    'timeoutSeconds',
    'integer',
    'Ends a watch after this many seconds, cleanly. Without it the server picks a duration.',
  ),
  watch: param(
    'watch',
    'boolean',
    'Watch for changes instead of listing: the response is a stream of ADDED, MODIFIED, DELETED, BOOKMARK and ERROR events, one JSON object per line.',
  ),
} as const;

export const PRETTY = P.pretty;

export const LIST_PARAMETERS: readonly QueryParameter[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];

export const READ_PARAMETERS: readonly QueryParameter[] = [P.resourceVersion];

/** create, replace and patch. */
export const WRITE_PARAMETERS: readonly QueryParameter[] = [P.dryRun, P.fieldManager, P.fieldValidation];

/** patch: the write parameters and server-side apply's `force`. */
export const PATCH_PARAMETERS: readonly QueryParameter[] = [
  P.dryRun,
  P.fieldManager,
  P.fieldValidation,
  P.force,
];

export const DELETE_PARAMETERS: readonly QueryParameter[] = [
  P.dryRun,
  P.gracePeriodSeconds,
  P.orphanDependents,
  P.propagationPolicy,
];

export const DELETECOLLECTION_PARAMETERS: readonly QueryParameter[] = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];
