// For tests of things that converge (a new key reaches the authenticator through a
// watch; a closed stream reaches the server): retry an assertion until it holds.

/** Retries `fn` until it stops throwing, for at most `timeoutMs`; then throws its last error. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
