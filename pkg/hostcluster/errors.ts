// Failures talking to the host cluster, with the HTTP status and the Status reason
// the host gave (NotFound, AlreadyExists, Conflict, Forbidden, ...). `code` 0 means
// the host was not reached at all (connection refused, TLS failure, timeout).

export class HostClusterError extends Error {
  override readonly name = 'HostClusterError';

  constructor(
    message: string,
    readonly code: number,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function isHostNotFound(err: unknown): boolean {
  return err instanceof HostClusterError && err.code === 404;
}

export function isHostAlreadyExists(err: unknown): boolean {
  return err instanceof HostClusterError && err.code === 409 && err.reason === 'AlreadyExists';
}

export function isHostConflict(err: unknown): boolean {
  return err instanceof HostClusterError && err.code === 409 && err.reason !== 'AlreadyExists';
}

/** The reason and message of a Kubernetes Status body, when the body is one. */
export function statusOf(body: unknown): { reason: string; message: string } | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { kind?: unknown; reason?: unknown; message?: unknown };
  if (v.kind !== 'Status') return undefined;
  return {
    reason: typeof v.reason === 'string' ? v.reason : '',
    message: typeof v.message === 'string' ? v.message : '',
  };
}
