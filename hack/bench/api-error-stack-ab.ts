// What an expected refusal costs with and without a captured stack trace, A/B in one
// process (compareAlternating: rounds alternating, median CPU µs per refusal). A is
// ApiError as it was (an Error subclass whose construction captures up to
// Error.stackTraceLimit frames), B is ApiError now (a refusal captures none; only a
// 500 does). Each refusal is built, thrown and caught from some frames deep, as a
// handler's would be, and its Status taken. See "ApiError without a stack for a
// refusal" in docs/performance/limiter-rows-by-rounds.md.
// Run: node dist/hack/bench/api-error-stack-ab.js [calls-per-round] [rounds]

import { ApiError, newNotFound, type StatusReason } from '../../pkg/apis/meta/errors.js';
import type { StatusDetails } from '../../pkg/apis/meta/types.js';

import { compareAlternating } from './alternating-ab.js';

/** ApiError before this change: the same fields, the stack captured by Error's constructor. */
class CapturingApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }
}

const TEAMS = { group: 'management.platform.dev', resource: 'teams' };
const DEPTH = 20;

/** Throws `make()` from `depth` frames down and catches it here, as a handler's refusal travels. */
function refuse(make: () => Error, depth: number): number {
  const down = (n: number): never => {
    if (n === 0) throw make();
    return down(n - 1);
  };
  try {
    down(depth);
  } catch (err) {
    return (err as { code: number }).code;
  }
  return 0;
}

let sink = 0;
const calls = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 9);
compareAlternating(
  [
    [
      [
        'A: refusal with a stack (before)',
        () =>
          (sink += refuse(
            () => new CapturingApiError(404, 'NotFound', 'teams.management.platform.dev "x" not found', { name: 'x' }),
            DEPTH,
          )),
      ],
      ['B: refusal without one (ApiError now)', () => (sink += refuse(() => newNotFound(TEAMS, 'x'), DEPTH))],
    ],
    [
      ['A: a 404 built only, with a stack', () => (sink += new CapturingApiError(404, 'NotFound', 'x').code)],
      ['B: a 404 built only, ApiError now', () => (sink += new ApiError(404, 'NotFound', 'x').code)],
    ],
  ],
  calls,
  rounds,
  'refusal',
);
if (sink === 0) console.log('(nothing counted)');
