// What publishing the self-subject reviews in OpenAPI and counting terminations
// cost, A/B in one process with alternating rounds (median of each side), reported
// as CPU time (process.cpuUsage over the timed window), which other load on a shared
// machine disturbs far less than wall time:
//
//   documents  building the OpenAPI documents at start-up: the API group alone (A)
//              against the API group and the three reviews (B), CPU ms per build, and
//              the bytes of /openapi/v2 (JSON and gnostic protobuf) each side serves.
//              Served from cached bytes, so this is a start-up cost only.
//   arm        the request deadline armed on every non-watch request: without (A) and
//              with (B) the termination hook, CPU ns per arm (the hook is one more
//              captured variable; the counter itself runs only on a 504).
//
// Pure in-process work: no network, bounded in time.
// Run: node dist/hack/bench/openapi-terminations-ab.js [rounds]

import type { PlatformAuthorization } from '../../pkg/authorization/index.js';
import { RequestTimeoutFilter } from '../../pkg/apiserver/filters/timeout.js';
import { openAPIDocuments } from '../../pkg/apiserver/openapi/index.js';
import { encodeOpenAPIV2Proto } from '../../pkg/apiserver/openapi/openapi-v2-proto.js';
import type { RequestScope } from '../../pkg/apiserver/scope.js';
import { managementKinds } from '../../pkg/registry/management/kinds.js';
import type { RESTStorage } from '../../pkg/registry/rest/interfaces.js';
import { selfReviewResources } from '../../pkg/server/self-reviews.js';

const GROUP = 'management.platform.dev';
const rounds = Number(process.argv[2] ?? 7);

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** CPU microseconds `fn` takes, per call, over `n` calls. */
function cpuPerCall(n: number, fn: () => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const resources: RESTStorage[] = managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
// Described only, never asked.
const authorization = {
  authorizer: { authorize: () => Promise.reject(new Error('not asked')) },
  callers: {},
} as unknown as PlatformAuthorization;
const reviews = selfReviewResources(GROUP, authorization, resources);

function documentsAB(): void {
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    a.push(cpuPerCall(20, () => openAPIDocuments(GROUP, 'v1', resources, [])) / 1000);
    b.push(cpuPerCall(20, () => openAPIDocuments(GROUP, 'v1', resources, reviews)) / 1000);
  }
  const size = (builtin: readonly RESTStorage[]): string => {
    const v2 = openAPIDocuments(GROUP, 'v1', resources, builtin).v2;
    return `${JSON.stringify(v2).length} B JSON, ${encodeOpenAPIV2Proto(v2).length} B protobuf`;
  };
  console.log(`documents  A (group only)   ${median(a).toFixed(2)} CPU ms/build; /openapi/v2 ${size([])}`);
  console.log(`documents  B (with reviews) ${median(b).toFixed(2)} CPU ms/build; /openapi/v2 ${size(reviews)}`);
}

/** Enough of a request scope for arm(): no query, a deadline that is recorded and never fires. */
function fakeScope(): RequestScope {
  const scope = {
    hasQuery: false,
    timedOut: false,
    isClosed: false,
    armed: undefined as unknown,
    armDeadline(_ms: number, timeout: () => unknown): void {
      scope.armed = timeout;
    },
  };
  return scope as unknown as RequestScope;
}

function armAB(): void {
  const without = new RequestTimeoutFilter(60_000);
  const withHook = new RequestTimeoutFilter(60_000, () => undefined);
  const scope = fakeScope();
  const a: number[] = [];
  const b: number[] = [];
  const n = 200_000;
  for (let r = 0; r < rounds; r++) {
    a.push(cpuPerCall(n, () => without.arm(scope)) * 1000);
    b.push(cpuPerCall(n, () => withHook.arm(scope)) * 1000);
  }
  console.log(`arm        A (no hook)      ${median(a).toFixed(0)} CPU ns/arm`);
  console.log(`arm        B (termination)  ${median(b).toFixed(0)} CPU ns/arm`);
}

documentsAB();
armAB();
