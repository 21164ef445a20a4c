// Runs the real `platform` binary the way a user does: the compiled
// dist/cmd/platform/main.js (the package's `bin`) when the tests run from dist/,
// else the TypeScript source through tsx. Each runner has its own HOME, so the
// default login file (~/.platform/config.json) and kube config are the test's own.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './commands.js';
import type { CommandResult } from './commands.js';

const compiled = import.meta.url.endsWith('.js');
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), compiled ? '../..' : '..');

function cliCommand(): string[] {
  if (compiled) return [join(repoRoot, 'dist', 'cmd', 'platform', 'main.js')];
  return ['--import', 'tsx', join(repoRoot, 'cmd', 'platform', 'main.ts')];
}

export interface CliRunner {
  readonly home: string;
  /** Runs `platform <args>`; never throws on a non-zero exit. */
  run(
    args: readonly string[],
    options?: { env?: Record<string, string>; input?: string },
  ): Promise<CommandResult>;
  /** Like run, but throws with the output unless the exit code is 0. */
  ok(
    args: readonly string[],
    options?: { env?: Record<string, string>; input?: string },
  ): Promise<CommandResult>;
  /** Runs `platform <args>` with stdin from `input` and stdout kept as bytes (binary-safe). */
  runBinary(
    args: readonly string[],
    input?: Buffer,
  ): Promise<{ code: number | null; stdout: Buffer; stderr: string }>;
  cleanup(): void;
}

export function cliRunner(): CliRunner {
  const home = mkdtempSync(join(tmpdir(), 'platform-cli-home-'));
  // Nothing from the developer's own setup may leak into what the binary sees.
  const base: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    NODE_ENV: 'production',
  };
  const run = (args: readonly string[], options: { env?: Record<string, string>; input?: string } = {}) =>
    runCommand(process.execPath, [...cliCommand(), ...args], {
      env: { ...base, ...options.env },
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  return {
    home,
    run,
    async ok(args, options) {
      const r = await run(args, options);
      if (r.code !== 0) {
        throw new Error(
          `platform ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
        );
      }
      return r;
    },
    runBinary(args, input) {
      const child = spawn(process.execPath, [...cliCommand(), ...args], { env: base, stdio: 'pipe' });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      return new Promise((resolve) =>
        child.once('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout: Buffer.concat(out), stderr: err });
        }),
      );
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** A failure as users see it: one line on stderr, `error: ...`, no stack trace. */
export function oneLineError(r: CommandResult): string {
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1 || /^\s+at /m.test(r.stderr)) {
    throw new Error(`expected one error line, got:\n${r.stderr}`);
  }
  return lines[0] ?? '';
}
