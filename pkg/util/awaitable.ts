// A value now or later, and asking a list of members in order until one decides
// (k8s.io/apiserver's union authenticator and union authorizer) without a promise
// when nobody has to be waited for.
//
// Most requests pass every authenticator and authorizer from memory; a promise
// (and a closure) per member per request was a measurable cost of every request.
// So the walk stays synchronous until a member answers with a promise, and only
// from there on continues in `then` callbacks, in the same order, with the same
// "first decider wins" rule. A synchronous throw from a member ends the walk as a
// rejection would.

/** A value now, or later. */
export type Awaitable<T> = T | Promise<T>;

/**
 * Asks `members` in order with `ask(member, input)`; the first answer for which
 * `decided` holds is the result, and `fallback` is the result when none decides.
 *
 * Built once per union: `ask` and `decided` should be module-level functions, so a
 * synchronous walk allocates nothing per call.
 */
export class FirstDecider<Member, Input, Result> {
  constructor(
    private readonly members: readonly Member[],
    private readonly ask: (member: Member, input: Input) => Awaitable<Result>,
    private readonly decided: (result: Result) => boolean,
    private readonly fallback: Result,
  ) {}

  decide(input: Input): Awaitable<Result> {
    return this.from(0, input);
  }

  /** Asks the members from the `first`th on. */
  private from(first: number, input: Input): Awaitable<Result> {
    const members = this.members;
    for (let i = first; i < members.length; i++) {
      const result = this.ask(members[i]!, input);
      if (result instanceof Promise) {
        const next = i + 1;
        return result.then((r) => (this.decided(r) ? r : this.from(next, input)));
      }
      if (this.decided(result)) return result;
    }
    return this.fallback;
  }
}
