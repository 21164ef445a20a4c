// SqliteKV: the revisioned KV in one SQLite file (better-sqlite3), for running on a
// single machine with nothing else installed. The layout is kine's (./schema.ts).
//
// Consistency comes from better-sqlite3 being synchronous: a write's check and insert
// run in one IMMEDIATE transaction, and no other JavaScript runs between the commit
// and the in-process notification of watchers, nor between a watch registering and
// it noting the revision its history replay stops at. So watchers see every revision
// exactly once, with no gap between history and live events. One process owns the
// file (an exclusive lock): watch notification is in-process, so a second writer
// would go unseen.

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type {
  DeleteResult,
  KeyValue,
  KV,
  KVEvent,
  KVWatch,
  KVWatchHandlers,
  RangeOptions,
  RangeResult,
  TxnResult,
} from '../kv.js';
import { CompactedError, FutureRevisionError, prefixEnd } from '../kv.js';
import { COMPACT_REV_KEY, type LogRow, SCHEMA } from './schema.js';

export interface SqliteKVOptions {
  /**
   * Compact automatically every this many ms, dropping history older than the revision
   * seen at the previous run (so at least one interval of history stays watchable).
   * 0 or absent: only explicit compact() calls.
   */
  readonly compactIntervalMs?: number;
  /** Rows per statement when replaying watch history and when compacting. Default 1000. */
  readonly batchSize?: number;
  /** How long to wait for the file lock held by another process (ms). Default 5000. */
  readonly lockTimeoutMs?: number;
}

type Statement<P extends unknown[], R> = Database.Statement<P, R>;

interface Subscriber {
  readonly prefix: string;
  /** Exclusive upper bound of the watched range ('' = unbounded). */
  readonly end: string;
  readonly handlers: KVWatchHandlers;
  /** Lowest revision to deliver. */
  readonly from: number;
  /** Replaying history: live events wait in `buffered` until it is done. */
  catchingUp: boolean;
  buffered: KVEvent[];
  pending: KVEvent[];
  flushScheduled: boolean;
  /** Highest revision handed to the handlers, so nothing is delivered twice. */
  delivered: number;
  cancelled: boolean;
}

const EMPTY = Buffer.alloc(0);

function inRange(key: string, start: string, end: string): boolean {
  return key >= start && (end === '' || key < end);
}

function createRevisionOf(row: LogRow): number {
  return row.created ? row.id : row.create_revision;
}

function keyValueOf(row: LogRow): KeyValue {
  return {
    key: row.name,
    value: row.value ?? EMPTY,
    createRevision: createRevisionOf(row),
    modRevision: row.id,
  };
}

/** The value a row replaced, as the key stood before that write. */
function previousOf(row: LogRow): KeyValue | undefined {
  if (row.created || row.old_value === null) return undefined;
  return {
    key: row.name,
    value: row.old_value,
    createRevision: row.create_revision,
    modRevision: row.prev_revision,
  };
}

function eventOf(row: LogRow): KVEvent {
  const prevKv = previousOf(row);
  if (row.deleted) {
    const kv: KeyValue = { key: row.name, value: EMPTY, createRevision: 0, modRevision: row.id };
    return prevKv ? { type: 'delete', kv, prevKv } : { type: 'delete', kv };
  }
  return prevKv ? { type: 'put', kv: keyValueOf(row), prevKv } : { type: 'put', kv: keyValueOf(row) };
}

export class SqliteKV implements KV {
  private rev: number;
  private compactRev: number;
  private closed = false;
  /** Set by close(): background compaction stops at its next batch. */
  private closing = false;
  private readonly subscribers = new Set<Subscriber>();
  private readonly batchSize: number;
  private compactTimer: NodeJS.Timeout | undefined;
  private compacting: Promise<void> = Promise.resolve();

  private readonly latestStmt: Statement<[string], LogRow>;
  private readonly latestAtStmt: Statement<[string, number], LogRow>;
  private readonly insertStmt: Statement<
    [string, number, number, number, number, Buffer | null, Buffer | null],
    unknown
  >;
  private readonly rangeStmt: Statement<[string, string, number, number, number], LogRow>;
  private readonly rangeOpenStmt: Statement<[string, number, number, number], LogRow>;
  private readonly countStmt: Statement<[string, string, number, number], { n: number }>;
  private readonly countOpenStmt: Statement<[string, number, number], { n: number }>;
  private readonly historyStmt: Statement<[number, number, number], LogRow>;
  private readonly compactStmt: Statement<[number, number, number], unknown>;
  private readonly minIdStmt: Statement<[], { id: number | null }>;
  private readonly setMetaStmt: Statement<[string, number], unknown>;

  private constructor(
    private readonly db: Database.Database,
    options: SqliteKVOptions,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 1000);
    db.exec(SCHEMA);
    // Revision 1 is the empty store, as in etcd: no list or watch ever carries "0",
    // which clients read as "any version".
    db.prepare(
      "INSERT INTO sqlite_sequence (name, seq) SELECT 'kv', 1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'kv')",
    ).run();
    this.rev = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").get() as { seq: number }).seq;
    const compact = db.prepare('SELECT value FROM meta WHERE key = ?').get(COMPACT_REV_KEY) as
      { value: number } | undefined;
    this.compactRev = compact?.value ?? 0;

    this.latestStmt = db.prepare<[string], LogRow>(
      'SELECT * FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1',
    );
    this.latestAtStmt = db.prepare<[string, number], LogRow>(
      'SELECT * FROM kv WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1',
    );
    this.insertStmt = db.prepare<
      [string, number, number, number, number, Buffer | null, Buffer | null],
      unknown
    >(
      'INSERT INTO kv (name, created, deleted, create_revision, prev_revision, value, old_value) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    // The newest row per key at the revision, walked in key order through the (name, id)
    // index so a LIMIT stops the scan early.
    const latestAt =
      'k.id = (SELECT MAX(l.id) FROM kv AS l WHERE l.name = k.name AND l.id <= ?) AND k.deleted = 0';
    this.rangeStmt = db.prepare<[string, string, number, number, number], LogRow>(
      `SELECT k.* FROM kv AS k WHERE k.name >= ? AND k.name < ? AND k.id <= ? AND ${latestAt} ORDER BY k.name LIMIT ?`,
    );
    this.rangeOpenStmt = db.prepare<[string, number, number, number], LogRow>(
      `SELECT k.* FROM kv AS k WHERE k.name >= ? AND k.id <= ? AND ${latestAt} ORDER BY k.name LIMIT ?`,
    );
    this.countStmt = db.prepare<[string, string, number, number], { n: number }>(
      `SELECT COUNT(*) AS n FROM kv AS k WHERE k.name >= ? AND k.name < ? AND k.id <= ? AND ${latestAt}`,
    );
    this.countOpenStmt = db.prepare<[string, number, number], { n: number }>(
      `SELECT COUNT(*) AS n FROM kv AS k WHERE k.name >= ? AND k.id <= ? AND ${latestAt}`,
    );
    this.historyStmt = db.prepare<[number, number, number], LogRow>(
      'SELECT * FROM kv WHERE id >= ? AND id <= ? ORDER BY id LIMIT ?',
    );
    // A row is garbage once a newer row of its key exists at or before the compaction
    // revision; a tombstone before it is garbage too (the key reads as absent either way).
    this.compactStmt = db.prepare<[number, number, number], unknown>(
      'DELETE FROM kv WHERE id >= ? AND id < ? AND (deleted = 1 OR EXISTS (SELECT 1 FROM kv AS n WHERE n.name = kv.name AND n.id > kv.id AND n.id <= ?))',
    );
    this.minIdStmt = db.prepare<[], { id: number | null }>('SELECT MIN(id) AS id FROM kv');
    this.setMetaStmt = db.prepare<[string, number], unknown>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );

    const interval = options.compactIntervalMs ?? 0;
    if (interval > 0) {
      let target = this.rev;
      this.compactTimer = setInterval(() => {
        const upTo = target;
        target = this.rev;
        if (upTo > this.compactRev) this.compact(upTo).catch(() => undefined);
      }, interval);
      this.compactTimer.unref();
    }
  }

  /** Opens (creating if needed) the database at `path`; ':memory:' gives a private in-memory store. */
  static open(path: string, options: SqliteKVOptions = {}): SqliteKV {
    const db = new Database(path, { timeout: options.lockTimeoutMs ?? 5000 });
    try {
      if (path !== ':memory:' && path !== '') {
        // Durable acknowledgement: every commit is fsynced before the write resolves.
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        // One owner per file (see the header); a second process fails to open it.
        db.pragma('locking_mode = EXCLUSIVE');
      }
      // Compacted rows are overwritten with zeros, not left in free pages: once plain
      // values have been rewritten encrypted and compacted away, the file holds none.
      db.pragma('secure_delete = ON');
      return new SqliteKV(db, options);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Resolves a requested read revision (0 = current) or throws as etcd would. */
  private readRevision(revision: number | undefined): number {
    this.assertOpen();
    if (revision === undefined || revision <= 0) return this.rev;
    if (revision > this.rev) throw new FutureRevisionError(revision, this.rev);
    if (revision < this.compactRev) throw new CompactedError(revision, this.compactRev);
    return revision;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('sqlite storage is closed');
  }

  async get(key: string, revision?: number): Promise<{ kv: KeyValue | undefined; revision: number }> {
    const rev = this.readRevision(revision);
    const row = rev === this.rev ? this.latestStmt.get(key) : this.latestAtStmt.get(key, rev);
    return { kv: row && !row.deleted ? keyValueOf(row) : undefined, revision: rev };
  }

  async range(start: string, end: string, options: RangeOptions = {}): Promise<RangeResult> {
    const rev = this.readRevision(options.revision);
    const limit = options.limit ?? 0;
    // One extra row tells whether more follow.
    const sqlLimit = limit > 0 ? limit + 1 : -1;
    const rows =
      end === ''
        ? this.rangeOpenStmt.all(start, rev, rev, sqlLimit)
        : this.rangeStmt.all(start, end, rev, rev, sqlLimit);
    const more = limit > 0 && rows.length > limit;
    const kvs = (more ? rows.slice(0, limit) : rows).map(keyValueOf);
    if (!options.count) return { kvs, revision: rev, more };
    const count =
      (end === '' ? this.countOpenStmt.get(start, rev, rev) : this.countStmt.get(start, end, rev, rev))?.n ??
      0;
    return { kvs, revision: rev, more, count };
  }

  /**
   * Runs `write` in an IMMEDIATE transaction: it reads the key's newest row and either
   * returns a failed result or the row to insert. Watchers hear of the insert after commit.
   */
  private write<R extends TxnResult>(
    key: string,
    write: (
      latest: LogRow | undefined,
    ) => { fail: R } | { insert: Omit<LogRow, 'id'>; result: (row: LogRow) => R },
  ): R {
    this.assertOpen();
    const written: { row?: LogRow } = {};
    const txn = this.db.transaction((): R => {
      const decision = write(this.latestStmt.get(key));
      if ('fail' in decision) return decision.fail;
      const r = decision.insert;
      const info = this.insertStmt.run(
        r.name,
        r.created,
        r.deleted,
        r.create_revision,
        r.prev_revision,
        r.value,
        r.old_value,
      );
      const row: LogRow = { ...r, id: Number(info.lastInsertRowid) };
      written.row = row;
      return decision.result(row);
    });
    const result = txn.immediate();
    if (written.row) {
      this.rev = written.row.id;
      this.notify(written.row);
    }
    return result;
  }

  async create(key: string, value: Buffer): Promise<TxnResult> {
    return this.write(key, (latest) => {
      if (latest && !latest.deleted)
        return { fail: { ok: false, revision: this.rev, current: keyValueOf(latest) } };
      return {
        insert: {
          name: key,
          created: 1,
          deleted: 0,
          create_revision: 0,
          prev_revision: latest?.id ?? 0,
          value,
          old_value: null,
        },
        result: (row) => ({ ok: true, revision: row.id }),
      };
    });
  }

  async update(key: string, value: Buffer, expectedModRevision: number): Promise<TxnResult> {
    return this.write(key, (latest) => {
      if (!latest || latest.deleted) return { fail: { ok: false, revision: this.rev } };
      if (latest.id !== expectedModRevision)
        return { fail: { ok: false, revision: this.rev, current: keyValueOf(latest) } };
      return {
        insert: {
          name: key,
          created: 0,
          deleted: 0,
          create_revision: createRevisionOf(latest),
          prev_revision: latest.id,
          value,
          old_value: latest.value,
        },
        result: (row) => ({ ok: true, revision: row.id }),
      };
    });
  }

  async delete(key: string, expectedModRevision: number): Promise<DeleteResult> {
    return this.write<DeleteResult>(key, (latest) => {
      if (!latest || latest.deleted) return { fail: { ok: false, revision: this.rev } };
      if (expectedModRevision !== 0 && latest.id !== expectedModRevision) {
        return { fail: { ok: false, revision: this.rev, current: keyValueOf(latest) } };
      }
      return {
        insert: {
          name: key,
          created: 0,
          deleted: 1,
          create_revision: createRevisionOf(latest),
          prev_revision: latest.id,
          value: null,
          old_value: latest.value,
        },
        result: (row) => ({ ok: true, revision: row.id, deleted: keyValueOf(latest) }),
      };
    });
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    this.assertOpen();
    const from = fromRevision > 0 ? fromRevision : this.rev + 1;
    const sub: Subscriber = {
      prefix,
      end: prefixEnd(prefix),
      handlers,
      from,
      catchingUp: false,
      buffered: [],
      pending: [],
      flushScheduled: false,
      delivered: from - 1,
      cancelled: false,
    };
    const handle: KVWatch = {
      cancel: () => this.unsubscribe(sub),
      requestProgress: () => this.requestProgress(sub),
    };
    if (from < this.compactRev) {
      queueMicrotask(() => this.failSubscriber(sub, new CompactedError(from, this.compactRev)));
      return handle;
    }
    this.subscribers.add(sub);
    if (from <= this.rev) {
      // Everything up to the current revision comes from the log; anything written
      // from here on is live and waits in `buffered` until the replay is done. Both
      // steps happen in this one synchronous call, so nothing falls between them.
      sub.catchingUp = true;
      this.replay(sub, this.rev).catch((err: unknown) => this.failSubscriber(sub, err));
    }
    return handle;
  }

  /** Delivers the logged events in [sub.from, upTo], a batch per statement, then the buffered live ones. */
  private async replay(sub: Subscriber, upTo: number): Promise<void> {
    let cursor = sub.from;
    while (cursor <= upTo) {
      // Let the caller receive its handle first, and let other work run between batches.
      await yieldToEventLoop();
      if (sub.cancelled || this.closed) return;
      // compact() moves compactRev before deleting rows, so this check covers every row read below.
      if (cursor < this.compactRev) throw new CompactedError(cursor, this.compactRev);
      const rows = this.historyStmt.all(cursor, upTo, this.batchSize);
      for (const row of rows) {
        if (inRange(row.name, sub.prefix, sub.end)) this.deliver(sub, eventOf(row));
        if (sub.cancelled) return;
      }
      const last = rows[rows.length - 1];
      cursor = last === undefined ? upTo + 1 : last.id + 1;
    }
    sub.catchingUp = false;
    const live = sub.buffered;
    sub.buffered = [];
    for (const event of live) this.deliver(sub, event);
  }

  private deliver(sub: Subscriber, event: KVEvent): void {
    if (sub.cancelled || event.kv.modRevision <= sub.delivered) return;
    sub.delivered = event.kv.modRevision;
    try {
      sub.handlers.onEvents([event]);
    } catch {
      // A handler's failure is the watcher's business; the log and other watchers go on.
    }
  }

  /** After a commit: queue the event for every interested watcher, delivered off the writer's stack. */
  private notify(row: LogRow): void {
    let event: KVEvent | undefined;
    for (const sub of this.subscribers) {
      if (row.id < sub.from || !inRange(row.name, sub.prefix, sub.end)) continue;
      event ??= eventOf(row);
      if (sub.catchingUp) {
        sub.buffered.push(event);
        continue;
      }
      sub.pending.push(event);
      if (!sub.flushScheduled) {
        sub.flushScheduled = true;
        queueMicrotask(() => this.flush(sub));
      }
    }
  }

  private flush(sub: Subscriber): void {
    sub.flushScheduled = false;
    const events = sub.pending;
    sub.pending = [];
    for (const event of events) this.deliver(sub, event);
  }

  /**
   * Reports the current revision once everything up to it has been delivered: after
   * the events already queued for this watcher, and not while it is still replaying
   * history (the caller asks again).
   */
  private requestProgress(sub: Subscriber): void {
    queueMicrotask(() => {
      if (sub.cancelled || sub.catchingUp || this.closed) return;
      if (sub.pending.length > 0) this.flush(sub);
      if (sub.cancelled) return;
      try {
        sub.handlers.onProgress?.(this.rev);
      } catch {
        // see deliver()
      }
    });
  }

  private failSubscriber(sub: Subscriber, err: unknown): void {
    if (sub.cancelled) return;
    this.unsubscribe(sub);
    try {
      sub.handlers.onError(err instanceof Error ? err : new Error(String(err)));
    } catch {
      // see deliver()
    }
  }

  private unsubscribe(sub: Subscriber): void {
    sub.cancelled = true;
    sub.pending = [];
    sub.buffered = [];
    this.subscribers.delete(sub);
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.rev;
  }

  /**
   * The same revision currentRevision() answers, without a promise: `rev` moves in
   * the same synchronous step that commits a write, before the writer is answered,
   * and this process is the file's only writer, so every write acknowledged to
   * anyone before this call is at or below it. Undefined once closed (the caller
   * then asks currentRevision(), which says why).
   */
  readonly committedRevision = (): number | undefined => (this.closed ? undefined : this.rev);

  async compactedRevision(): Promise<number> {
    this.assertOpen();
    return this.compactRev;
  }

  /**
   * Drops history before `revision`: reads below it fail with CompactedError from now
   * on; the rows they would have needed are deleted in small batches afterwards.
   */
  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision <= this.compactRev) return;
    if (revision > this.rev) throw new FutureRevisionError(revision, this.rev);
    this.setMetaStmt.run(COMPACT_REV_KEY, revision);
    this.compactRev = revision;
    const previous = this.compacting;
    const run = previous.then(() => this.deleteCompacted(revision));
    this.compacting = run.catch(() => undefined);
    await run;
  }

  private async deleteCompacted(revision: number): Promise<void> {
    let lo = this.minIdStmt.get()?.id ?? revision;
    // Ascending windows: a key's older rows go before (or with) the tombstone that hides them,
    // so an interrupted compaction never makes a deleted key reappear.
    while (lo < revision) {
      if (this.closing) return;
      const hi = Math.min(lo + this.batchSize, revision);
      this.compactStmt.run(lo, hi, revision);
      lo = hi;
      if (lo < revision) await yieldToEventLoop();
    }
  }

  /**
   * Copies the write-ahead log into the database and empties it, so that pages it
   * held (a value before its rewrite, say) leave no trace in platform.db-wal.
   */
  async checkpoint(): Promise<void> {
    this.assertOpen();
    await this.compacting;
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** The database file's allocated pages (the WAL aside), the counterpart of etcd's dbSize. */
  sizeBytes(): Promise<number | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const pages = Number(this.db.pragma('page_count', { simple: true }));
    const pageSize = Number(this.db.pragma('page_size', { simple: true }));
    return Promise.resolve(Number.isFinite(pages * pageSize) ? pages * pageSize : undefined);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.compactTimer) clearInterval(this.compactTimer);
    await this.compacting;
    this.closed = true;
    for (const sub of [...this.subscribers]) this.unsubscribe(sub);
    this.db.close();
  }
}
