// The host double's failures: a Kubernetes Status with its code, reason and details,
// thrown by the API stand-ins and written by the double's request handler.

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}
