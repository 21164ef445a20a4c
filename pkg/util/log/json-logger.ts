// Structured logs through pino: one JSON object per line, so a log collector (or a
// test reading the child's stdout) can parse every line. The line keeps the shape
// the server has always written and scripts read: `level` as a name ("info"), `msg`,
// `time` as an ISO-8601 string, then the fields at the top level, no pid or hostname.

import pino from 'pino';

import type { Logger, LogLevel } from './logger.js';

/** Where lines go: process.stdout by default, or anything with a write (tests). */
export interface LogDestination {
  write(text: string): unknown;
}

/**
 * Field names that would carry a credential if a caller ever passed one: their
 * values are replaced, never written. Callers do not log secrets; this is the
 * second line of defence. Top-level names only: pino compiles each path into the
 * serializer, and a wildcard would cost every line a walk of its fields.
 */
export const REDACTED_FIELDS = [
  'authorization',
  'password',
  'token',
  'bearerToken',
  'privateKey',
  'secretKey',
  'headers.authorization',
  'headers.cookie',
] as const;

/**
 * The `,"msg":…,"time":…` of the line being written without a copy of its fields (see
 * JsonLogger.write): pino puts what its timestamp function returns right after the
 * level, where line() puts the message and the time. Empty at any other moment, so
 * every other line (and every child logger's) has no timestamp from pino, as before.
 */
let pendingPrefix = '';
const timestampPrefix = (): string => pendingPrefix;

export class JsonLogger implements Logger {
  private readonly pino: pino.Logger;
  /**
   * Whether lines may go to pino without line()'s copy: a logger without bindings
   * (pino writes a child's bindings after the timestamp, where the message would
   * land), unless a test asks for the copy to compare with.
   */
  private passThrough: boolean;

  constructor(
    level: LogLevel = 'info',
    out?: LogDestination,
    base: Readonly<Record<string, unknown>> = {},
    options: { readonly copyFields?: boolean } = {},
  ) {
    this.passThrough = options.copyFields !== true && Object.keys(base).length === 0;
    this.pino = pino(
      {
        level,
        base,
        // pino writes `level`, then the time, then the fields, then `msg`; the
        // message and the time go in front of the fields instead (see line() and
        // write()): pino's own time is never written.
        timestamp: timestampPrefix,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: [...REDACTED_FIELDS], censor: '[REDACTED]' },
      },
      out ?? stdout(),
    ) as pino.Logger;
  }

  /** A logger that adds `fields` to every line (e.g. a component name). */
  child(fields: Record<string, unknown>): JsonLogger {
    const child = Object.create(JsonLogger.prototype) as { pino: pino.Logger; passThrough: boolean };
    child.pino = this.pino.child(fields);
    child.passThrough = false;
    return child as unknown as JsonLogger;
  }

  get level(): LogLevel {
    return this.pino.level as LogLevel;
  }

  enabled(level: LogLevel): boolean {
    return this.pino.isLevelEnabled(level);
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('debug')) this.write('debug', msg, fields);
  }

  info(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('info')) this.write('info', msg, fields);
  }

  warn(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('warn')) this.write('warn', msg, fields);
  }

  error(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('error')) this.write('error', msg, fields);
  }

  /**
   * A line whose fields pino may serialize as they are (plain message, no field that
   * line() would change or move: see passesThrough) goes without line()'s copy of them:
   * the message and the time reach pino as its timestamp text, in the place line() gave
   * them. The request log writes one line per request (docs/performance/audited-gets.md).
   * The output is byte for byte line()'s (json-logger.test.ts).
   */
  private write(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined): void {
    if (this.passThrough && fields !== undefined && isPlainJsonString(msg) && passesThrough(fields)) {
      pendingPrefix = `,"msg":"${msg}","time":"${new Date().toISOString()}"`;
      try {
        this.pino[level](fields);
      } finally {
        pendingPrefix = '';
      }
      return;
    }
    this.pino[level](line(msg, fields));
  }
}

/** A string pino and JSON write between plain quotes: short, no quote, backslash, control character or surrogate. */
function isPlainJsonString(s: string): boolean {
  if (s.length > 100) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * Whether line() would copy `fields` unchanged after `msg` and `time`: a plain object
 * with no key it drops or moves (`level`, `msg`, `time`, which would take the time's
 * place; an array index, which an object lists first; `__proto__`, which an assignment
 * does not copy) and no Error value (which it describes). Walked in place.
 */
function passesThrough(fields: Record<string, unknown>): boolean {
  if (Object.getPrototypeOf(fields) !== Object.prototype) return false;
  for (const key in fields) {
    if (key === 'level' || key === 'msg' || key === 'time' || key === '__proto__') return false;
    const c = key.charCodeAt(0);
    if (c >= 48 && c <= 57) return false;
    if (fields[key] instanceof Error) return false;
  }
  return true;
}

let sharedStdout: LogDestination | undefined;

/**
 * One stdout for every logger of the process: pino's own (sonic-boom), which writes
 * asynchronously, gathering the lines logged while a write is under way into the next
 * one, and flushes at exit. A busy server logs a line per request, and each write is a
 * system call; one shared stream also keeps the lines of several loggers in order.
 * The lines of one turn of the event loop reach sonic-boom as one string (see
 * LineGatherer).
 */
export function stdout(): LogDestination {
  if (!sharedStdout) {
    // The gatherer's exit hook is registered before sonic-boom's, so it runs first.
    const gatherer = new LineGatherer();
    gatherer.sink = pino.destination({ dest: 1, sync: false });
    sharedStdout = gatherer;
  }
  return sharedStdout;
}

/** What LineGatherer hands its lines to: sonic-boom, or anything with a write (tests). */
export interface GatheredSink {
  write(text: string): unknown;
  flushSync?(): void;
}

/**
 * Hands the lines logged in one turn of the event loop to the sink as one string.
 * sonic-boom appends each write to its pending buffer with `+=` after measuring that
 * buffer with Buffer.byteLength, which flattens it: with ~30 request lines gathered
 * per system call, every line copied the whole pending buffer again (~5 KB of garbage
 * per get, a sixth of what a get allocated; docs/performance/get-path-fourth-pass.md).
 * Joined here, the sink measures and copies each line once.
 * Nothing is lost at exit: the hook below passes what is gathered on and has the sink
 * write it synchronously, as pino's own exit hook does.
 */
export class LineGatherer implements LogDestination {
  sink: GatheredSink | undefined;
  private pending: string[] = [];
  private scheduled = false;

  constructor(sink?: GatheredSink) {
    this.sink = sink;
    process.on('exit', () => {
      this.flush();
      try {
        this.sink?.flushSync?.();
      } catch {
        // The stream is gone (closed or not yet open): nothing more can be written.
      }
    });
  }

  write(text: string): boolean {
    this.pending.push(text);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return true;
  }

  /** Passes the gathered lines on, in the order they were written. */
  readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.pending;
    if (lines.length === 0) return;
    this.pending = [];
    this.sink?.write(lines.length === 1 ? lines[0]! : lines.join(''));
  };
}

/**
 * The object pino serializes: `msg` and `time` first (the order every line has had),
 * then the caller's fields, which may not replace the level or the message. An Error
 * field is written as its name, message and stack (JSON would write `{}`).
 */
function line(msg: string, fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { msg, time: new Date().toISOString() };
  if (fields === undefined) return out;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key) || key === 'level' || key === 'msg') continue;
    const value = fields[key];
    out[key] = value instanceof Error ? describeError(value, 0) : value;
  }
  return out;
}

function describeError(err: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: err.message };
  if (err.stack) out.stack = err.stack;
  if (err.cause !== undefined) {
    // A chain of causes is short; the bound only guards a cycle.
    out.cause = err.cause instanceof Error && depth < 8 ? describeError(err.cause, depth + 1) : err.cause;
  }
  return out;
}
