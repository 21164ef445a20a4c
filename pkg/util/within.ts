// Waiting for something with a bound: true when it settled in time, false when the
// time ran out first. The timer is always cleared, so a wait that ended early
// leaves nothing that keeps the process alive.

/** Whether `promise` resolves within `timeoutMs` (a rejection counts as settled: true). */
export async function settlesWithin(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([
      promise.then(
        () => true as const,
        () => true as const,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
