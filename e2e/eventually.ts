// Retries an assertion while a change travels through the server's watches (or a
// short ttl runs out): a bounded poll instead of a sleep, so a test waits only as
// long as the server needs and fails with the last assertion's message.

export async function eventually(fn: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
