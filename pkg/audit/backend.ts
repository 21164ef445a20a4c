// Audit backends (k8s.io/apiserver pkg/audit/types.go Backend, union.go, and the
// mode wrappers of pkg/server/options/audit.go): a backend stores events; a mode
// decides what a request waits for and what a failure does to it.
//
//   blocking-strict  the request waits for the write; a failed RequestReceived
//                    write fails the request (500), as upstream
//   blocking         the request waits for the write; failures are counted, never fatal
//   batch            events are queued (buffered.ts); the request never waits, a
//                    full queue drops and counts

import { auditErrorTotal } from '../metrics/audit.js';
import type { AuditSink } from './context.js';
import type { Event } from './types.js';

export const AUDIT_MODES = ['batch', 'blocking', 'blocking-strict'] as const;
export type AuditMode = (typeof AUDIT_MODES)[number];

export interface AuditBackend extends AuditSink {
  /** Flushes what is queued and stops; events after this are dropped and counted. */
  shutdown(): Promise<void>;
}

/** What a failure report needs of an event: its ID (never its content). */
export type AuditedEventID = Pick<Event, 'auditID'>;

/** How a backend reports events it could not store (audit.HandlePluginError), never with their content. */
export type PluginErrorReporter = (plugin: string, err: unknown, events: readonly AuditedEventID[]) => void;

/** Counts the events and hands the error on (to the server log). */
export function pluginErrorReporter(
  log: (plugin: string, message: string, auditIDs: string[]) => void,
): PluginErrorReporter {
  return (plugin, err, events) => {
    auditErrorTotal.inc({ plugin }, events.length);
    const message = err instanceof Error ? err.message : String(err);
    log(
      plugin,
      message,
      events.map((e) => e.auditID),
    );
  };
}

const alwaysStored = (): true => true;

/** Blocking: waits for the delegate, but a failure never fails a request. */
export class IgnoreErrorsBackend implements AuditBackend {
  /** The delegate's way in for an encoded event, when it has one (the log backend). */
  readonly processLine?: (line: string, auditID: string) => Promise<boolean>;

  constructor(private readonly delegate: AuditBackend) {
    const processLine = delegate.processLine?.bind(delegate);
    if (processLine) this.processLine = (line, auditID) => processLine(line, auditID).then(alwaysStored);
  }

  async processEvents(events: readonly Event[]): Promise<boolean> {
    await this.delegate.processEvents(events);
    return true;
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}

/** Every backend gets every event (audit.Union): stored only when all stored it. */
export class UnionBackend implements AuditBackend {
  constructor(private readonly backends: readonly AuditBackend[]) {}

  async processEvents(events: readonly Event[]): Promise<boolean> {
    const results = await Promise.all(this.backends.map((b) => b.processEvents(events)));
    return results.every(Boolean);
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.shutdown()));
  }
}
