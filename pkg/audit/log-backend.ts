// The log backend (k8s.io/apiserver plugin/pkg/audit/log): one JSON event a line,
// to standard output (`--audit-log-path -`) or to a file rotated as upstream's
// lumberjack writer rotates it (--audit-log-maxsize megabytes, default 100; keep
// --audit-log-maxbackup old files, 0 all; remove those older than
// --audit-log-maxage days, 0 never; gzip them with --audit-log-compress). Rotation is
// rotating-file-stream's; rotated files are named as lumberjack names them
// (`audit-2024-05-01T10-20-30.123.log`), so log shippers configured for
// kube-apiserver's audit files find these.

import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { Writable } from 'node:stream';

import { createStream, type RotatingFileStream } from 'rotating-file-stream';

import type { AuditBackend, AuditedEventID, PluginErrorReporter } from './backend.js';
import { encodeEvent } from './encode.js';
import type { Event } from './types.js';

export const LOG_PLUGIN = 'log';

export interface LogFileOptions {
  readonly path: string;
  /** Megabytes; 0 means lumberjack's default of 100. */
  readonly maxSizeMB: number;
  /** Old files kept; 0 keeps them all. */
  readonly maxBackups: number;
  /** Days; 0 keeps them whatever their age. */
  readonly maxAgeDays: number;
  readonly compress: boolean;
}

const DEFAULT_MAX_SIZE_MB = 100;

/** lumberjack's backup name: `<name>-<UTC time 2006-01-02T15-04-05.000><ext>`. */
export function backupName(path: string, at: Date): string {
  const ext = extname(path);
  const name = basename(path, ext);
  const stamp = at.toISOString().slice(0, 23).replace(/:/g, '-');
  return join(dirname(path), `${name}-${stamp}${ext}`);
}

/** Removes rotated files older than `maxAgeDays` (lumberjack's MaxAge, by the time in the name's file). */
function removeOldBackups(path: string, maxAgeDays: number): void {
  const dir = dirname(path);
  const ext = extname(path);
  const prefix = `${basename(path, ext)}-`;
  const cutoff = Date.now() - maxAgeDays * 24 * 3_600_000;
  for (const entry of readdirSync(dir)) {
    if (!entry.startsWith(prefix)) continue;
    const full = join(dir, entry);
    try {
      if (statSync(full).mtimeMs < cutoff) unlinkSync(full);
    } catch {
      // Gone already, or not ours to remove: the next rotation looks again.
    }
  }
}

/** A rotating file writer with lumberjack's defaults and names. */
export function openRotatingFile(options: LogFileOptions): RotatingFileStream {
  const maxSize = options.maxSizeMB > 0 ? options.maxSizeMB : DEFAULT_MAX_SIZE_MB;
  const stream = createStream(
    (time: number | Date) => {
      if (!time) return basename(options.path);
      return basename(backupName(options.path, time instanceof Date ? time : new Date(time)));
    },
    {
      path: dirname(options.path),
      size: `${maxSize}M`,
      ...(options.maxBackups > 0
        ? { maxFiles: options.maxBackups, history: `.${basename(options.path)}.history` }
        : {}),
      ...(options.compress ? { compress: 'gzip' as const } : {}),
      mode: 0o600,
    },
  );
  if (options.maxAgeDays > 0) stream.on('rotated', () => removeOldBackups(options.path, options.maxAgeDays));
  return stream;
}

/** Where the log backend's lines go when they are not a stream: the process's stdout line gatherer (pkg/util/log). */
export interface LineDestination {
  write(text: string): unknown;
}

/** What one processEvents call waits for: its lines written, or their failure reported. */
interface PendingWrite {
  readonly events: readonly AuditedEventID[];
  readonly resolve: (stored: boolean) => void;
}

export class LogBackend implements AuditBackend {
  private failed: Error | undefined;
  private readonly stream: Writable | undefined;
  private readonly lines: LineDestination | undefined;
  /** The text and the waiters of the lines given to a stream in this turn of the event loop. */
  private gathered = '';
  private waiting: PendingWrite[] = [];
  private scheduled = false;

  constructor(
    /**
     * A stream (a rotating file), written once a turn with the lines of that turn; or
     * the stdout line gatherer, which itself writes once a turn and never fails.
     */
    out: Writable | LineDestination,
    private readonly reportError: PluginErrorReporter,
    /** Standard output is not ours to end. */
    private readonly ownsStream: boolean,
  ) {
    if (out instanceof Writable) {
      this.stream = out;
      // A write error surfaces on the stream too; remember it so later writes fail fast.
      out.on('error', (err: Error) => {
        this.failed = err;
      });
    } else {
      this.lines = out;
    }
  }

  processEvents(events: readonly Event[]): Promise<boolean> {
    let text = '';
    for (const e of events) text += `${encodeEvent(e)}\n`;
    return this.writeLines(text, events);
  }

  /** One event already encoded (encodeEvent): the request path's way in, with no snapshot of the event. */
  processLine(line: string, auditID: string): Promise<boolean> {
    return this.writeLines(`${line}\n`, [{ auditID }]);
  }

  private writeLines(text: string, events: readonly AuditedEventID[]): Promise<boolean> {
    if (this.lines) {
      // The gatherer keeps the text and writes it with the turn's log lines, in order.
      this.lines.write(text);
      return STORED;
    }
    const stream = this.stream as Writable;
    if (this.failed || stream.destroyed || stream.writableEnded) {
      this.reportError(LOG_PLUGIN, this.failed ?? new Error('audit log is closed'), events);
      return NOT_STORED;
    }
    return new Promise<boolean>((resolve) => {
      this.gathered += text;
      this.waiting.push({ events, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /**
   * Writes the turn's lines to the stream as one chunk: rotating-file-stream does its
   * bookkeeping (size, rotation check) per write, and each write is a system call.
   * Every waiter learns the outcome of that one write.
   */
  private readonly flush = (): void => {
    this.scheduled = false;
    const text = this.gathered;
    const waiting = this.waiting;
    if (waiting.length === 0) return;
    this.gathered = '';
    this.waiting = [];
    const settle = (err: unknown): void => {
      for (const w of waiting) {
        if (err) this.reportError(LOG_PLUGIN, err, w.events);
        w.resolve(!err);
      }
    };
    const stream = this.stream as Writable;
    if (this.failed || stream.destroyed || stream.writableEnded) {
      settle(this.failed ?? new Error('audit log is closed'));
      return;
    }
    try {
      stream.write(text, (err) => settle(err ?? undefined));
    } catch (err) {
      settle(err);
    }
  };

  async shutdown(): Promise<void> {
    // What this turn gathered is written before the stream ends.
    this.flush();
    const stream = this.stream;
    if (!this.ownsStream || !stream || stream.writableEnded) return;
    await new Promise<void>((resolve) => stream.end(resolve));
  }
}

const STORED = Promise.resolve(true);
const NOT_STORED = Promise.resolve(false);
