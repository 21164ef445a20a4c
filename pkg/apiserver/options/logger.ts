// Structured logs: one JSON object per line on stdout, so a log collector (or a
// test reading the child's stdout) can parse every line. Callers pass facts as
// fields; secrets (access keys, tokens, private keys) are never passed in.

import type { Writable } from 'node:stream';
import type { Logger } from '../config.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export class JsonLogger implements Logger {
  private readonly threshold: number;

  constructor(
    readonly level: LogLevel = 'info',
    private readonly out: Pick<Writable, 'write'> = process.stdout,
    private readonly base: Readonly<Record<string, unknown>> = {},
  ) {
    this.threshold = LOG_LEVELS.indexOf(level);
  }

  /** A logger that adds `fields` to every line (e.g. a component name). */
  child(fields: Record<string, unknown>): JsonLogger {
    return new JsonLogger(this.level, this.out, { ...this.base, ...fields });
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write('debug', msg, fields);
  }

  info(msg: string, fields?: Record<string, unknown>): void {
    this.write('info', msg, fields);
  }

  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write('warn', msg, fields);
  }

  error(msg: string, fields?: Record<string, unknown>): void {
    this.write('error', msg, fields);
  }

  private write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (LOG_LEVELS.indexOf(level) < this.threshold) return;
    // level, msg and time lead every line and cannot be overwritten by fields.
    const line = { level, msg, time: new Date().toISOString(), ...this.base, ...fields };
    line.level = level;
    line.msg = msg;
    this.out.write(JSON.stringify(line, errorReplacer) + '\n');
  }
}

/** Errors serialize as their name, message and stack instead of `{}`. */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message };
    if (value.stack) out.stack = value.stack;
    if (value.cause !== undefined) out.cause = value.cause;
    return out;
  }
  return value;
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
