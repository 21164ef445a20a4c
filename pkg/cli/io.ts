// What a command may touch of the outside world, passed in rather than taken from
// `process`, so the whole client runs in-process in tests with its own
// environment, home directory and captured output.

export interface Output {
  write(chunk: string | Uint8Array): unknown;
}

export interface CliIO {
  readonly stdout: Output;
  readonly stderr: Output;
  /** Read fully by `--from-file -`. */
  readonly stdin: AsyncIterable<Buffer | string>;
  readonly stdoutIsTTY: boolean;
  /** Standard input is a terminal, where a secret may be asked for. */
  readonly stdinIsTTY?: boolean;
  /** Asks for a secret on the terminal without echoing it (see terminal.ts). */
  readonly readSecret?: (prompt: string) => Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  readonly cwd: string;
}

export async function readAll(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}
