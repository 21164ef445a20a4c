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
  private readonly baseIsEmpty: boolean;

  constructor(
    readonly level: LogLevel = 'info',
    private readonly out: Pick<Writable, 'write'> = process.stdout,
    private readonly base: Readonly<Record<string, unknown>> = {},
  ) {
    this.threshold = LOG_LEVELS.indexOf(level);
    this.baseIsEmpty = Object.keys(base).length === 0;
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
    const time = new Date().toISOString();
    // A replacer costs a call per key: only lines that carry an error need one.
    const replacer = carriesError(fields) ? errorReplacer : undefined;
    let text: string;
    if (this.baseIsEmpty && fields !== undefined && !namesLeadingKey(fields)) {
      // The common line (a request's): the fields serialized as they are, after the
      // leading keys, without first copying them into a new object.
      const rest = JSON.stringify(fields, replacer);
      text = `{"level":"${level}","msg":${JSON.stringify(msg)},"time":"${time}"${rest.length > 2 ? `,${rest.slice(1)}` : '}'}\n`;
    } else {
      // level, msg and time lead every line and cannot be overwritten by fields.
      const line = { level, msg, time, ...this.base, ...fields };
      line.level = level;
      line.msg = msg;
      text = JSON.stringify(line, replacer) + '\n';
    }
    if (this.out === process.stdout) stdoutBatch.write(text);
    else this.out.write(text);
  }
}

function carriesError(fields: Record<string, unknown> | undefined): boolean {
  if (!fields) return false;
  for (const value of Object.values(fields)) if (value instanceof Error) return true;
  return false;
}

/** Fields the fast path cannot serialize as they are: keys every line starts with (level, msg, time). */
function namesLeadingKey(fields: Record<string, unknown>): boolean {
  // Not a plain object (a toJSON of its own, say): the general path copies its own fields.
  if (Object.getPrototypeOf(fields) !== Object.prototype) return true;
  return Object.hasOwn(fields, 'level') || Object.hasOwn(fields, 'msg') || Object.hasOwn(fields, 'time');
}

/**
 * Lines for stdout, written once per turn of the event loop rather than once per
 * line: a write to a pipe or a file is a synchronous system call on Linux, and a
 * busy server logs a line per request. Whatever is pending goes out at exit.
 */
class StdoutBatch {
  private pending: string[] = [];
  private size = 0;
  private scheduled = false;

  write(text: string): void {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 64 * 1024) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.size = 0;
    process.stdout.write(text);
  }
}

const stdoutBatch = new StdoutBatch();
process.on('exit', () => stdoutBatch.flush());

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
