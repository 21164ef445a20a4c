// Running client programs (kubectl) from tests: one-shot commands whose exit code is
// data, not an exception, and long-running ones (`get -w`, `wait`) that a test starts,
// drives and stops. Every child started here is killed when the test process exits,
// so a failing test never leaves a kubectl watching a dead server.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface CommandResult {
  /** Exit code; null when the process was ended by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CommandOptions {
  /** Written to stdin, which is then closed. */
  readonly input?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long; the result then says so in stderr. Default 60 s. */
  readonly timeoutMs?: number;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A started command: its output so far, a way to wait for some output, and stop(). */
export interface BackgroundCommand {
  readonly pid: number | undefined;
  stdout(): string;
  stderr(): string;
  /** Resolved when the process exits by itself or after stop(). */
  readonly exited: Promise<CommandResult>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** Resolves when `predicate(stdout, stderr)` holds; rejects on exit or after timeoutMs with the output so far. */
  waitForOutput(
    predicate: (stdout: string, stderr: string) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<void>;
  /** Sends SIGTERM (SIGKILL after 10 s) and resolves with everything the process wrote. */
  stop(): Promise<CommandResult>;
}

export function startCommand(
  cmd: string,
  args: readonly string[],
  options: CommandOptions = {},
): BackgroundCommand {
  const child = spawn(cmd, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  live.add(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of listeners) l();
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    notify();
  });
  child.stderr.on('data', (chunk: string) => {
    err += chunk;
    notify();
  });
  child.stdin.on('error', () => undefined);
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();

  let done = false;
  const exited = new Promise<CommandResult>((resolve) => {
    let spawnError: Error | undefined;
    const settle = (result: CommandResult): void => {
      if (done) return;
      done = true;
      live.delete(child);
      notify();
      resolve(result);
    };
    child.once('error', (e) => {
      spawnError = e;
      // A command that could not be started may never emit 'close'.
      if (child.pid === undefined) {
        settle({
          code: 127,
          signal: null,
          stdout: out,
          stderr: `${err}failed to start ${cmd}: ${e.message}`,
        });
      }
    });
    // 'close' (not 'exit') so that all output has been read.
    child.once('close', (code, signal) => {
      settle({ code, signal, stdout: out, stderr: spawnError ? `${err}${spawnError.message}` : err });
    });
  });

  const describeOutput = (): string =>
    `\n--- ${cmd} ${args.join(' ')} stdout ---\n${out.slice(-4000)}\n--- stderr ---\n${err.slice(-4000)}`;

  return {
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    waitForOutput(predicate, what, timeoutMs = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (predicate(out, err)) finish();
          else if (done) finish(new Error(`${cmd} exited before ${what}${describeOutput()}`));
        };
        const timer = setTimeout(
          () => finish(new Error(`timed out after ${timeoutMs}ms waiting for ${what}${describeOutput()}`)),
          timeoutMs,
        );
        const finish = (e?: Error): void => {
          clearTimeout(timer);
          listeners.delete(check);
          if (e) reject(e);
          else resolve();
        };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (!done) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}

/** Runs a command to completion. Never throws for a non-zero exit: the code is part of the result. */
export async function runCommand(
  cmd: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const bg = startCommand(cmd, args, options);
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void bg.stop();
  }, timeoutMs);
  const result = await bg.exited;
  clearTimeout(timer);
  if (!timedOut) return result;
  return { ...result, stderr: `${result.stderr}\n[e2e] ${cmd} killed after ${timeoutMs}ms` };
}
