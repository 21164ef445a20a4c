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

export class JsonLogger implements Logger {
  private readonly pino: pino.Logger;

  constructor(level: LogLevel = 'info', out?: LogDestination, base: Readonly<Record<string, unknown>> = {}) {
    this.pino = pino(
      {
        level,
        base,
        // pino writes `level`, then the time, then the fields, then `msg`; the
        // message and the time go in front of the fields instead (see line()).
        timestamp: false,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: [...REDACTED_FIELDS], censor: '[REDACTED]' },
      },
      out ?? stdout(),
    ) as pino.Logger;
  }

  /** A logger that adds `fields` to every line (e.g. a component name). */
  child(fields: Record<string, unknown>): JsonLogger {
    const child = Object.create(JsonLogger.prototype) as { pino: pino.Logger };
    child.pino = this.pino.child(fields);
    return child as unknown as JsonLogger;
  }

  get level(): LogLevel {
    return this.pino.level as LogLevel;
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('debug')) this.pino.debug(line(msg, fields));
  }

  info(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('info')) this.pino.info(line(msg, fields));
  }

  warn(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('warn')) this.pino.warn(line(msg, fields));
  }

  error(msg: string, fields?: Record<string, unknown>): void {
    if (this.pino.isLevelEnabled('error')) this.pino.error(line(msg, fields));
  }
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
 * per get, a sixth of what a get allocated; docs/performance.md, "The request path of
 * a get, fourth pass"). Joined here, the sink measures and copies each line once.
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
