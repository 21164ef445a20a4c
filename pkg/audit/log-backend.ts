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
import type { Writable } from 'node:stream';

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

export class LogBackend implements AuditBackend {
  private failed: Error | undefined;

  constructor(
    private readonly out: Writable,
    private readonly reportError: PluginErrorReporter,
    /** Standard output is not ours to end. */
    private readonly ownsStream: boolean,
  ) {
    // A write error surfaces on the stream too; remember it so later writes fail fast.
    out.on('error', (err: Error) => {
      this.failed = err;
    });
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
    return new Promise<boolean>((resolve) => {
      const fail = (err: unknown): void => {
        this.reportError(LOG_PLUGIN, err, events);
        resolve(false);
      };
      if (this.failed || this.out.destroyed || this.out.writableEnded) {
        fail(this.failed ?? new Error('audit log is closed'));
        return;
      }
      try {
        this.out.write(text, (err) => (err ? fail(err) : resolve(true)));
      } catch (err) {
        fail(err);
      }
    });
  }

  async shutdown(): Promise<void> {
    if (!this.ownsStream || this.out.writableEnded) return;
    await new Promise<void>((resolve) => this.out.end(resolve));
  }
}
