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

/** kube-apiserver's 404 for a path it serves nothing at. */
export function notFoundPage(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

/** kube-apiserver's 405 for a verb the resource does not take. */
export function methodNotAllowed(): StatusError {
  return new StatusError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  );
}
