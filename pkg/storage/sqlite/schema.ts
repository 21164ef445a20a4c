// The on-disk layout, kine style: one append-only log whose AUTOINCREMENT row id is
// the revision. Each row is one write: a create, an update or a delete (tombstone).
// A key's state at revision R is its newest row with id <= R, absent if that row is
// a tombstone. `old_value` keeps the value a write replaced, so a watch can report
// the previous object even after compaction removed the row that first held it.

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  name            TEXT    NOT NULL,
  created         INTEGER NOT NULL,
  deleted         INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision   INTEGER NOT NULL,
  value           BLOB,
  old_value       BLOB
);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id);
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
`;

/** One log row as better-sqlite3 returns it. */
export interface LogRow {
  readonly id: number;
  readonly name: string;
  /** 1 when this write created the key (then its create revision is its own id). */
  readonly created: number;
  /** 1 for a tombstone. */
  readonly deleted: number;
  /** The key's create revision, for rows that did not create it. */
  readonly create_revision: number;
  /** The id of the row this write superseded (0 for none). */
  readonly prev_revision: number;
  readonly value: Buffer | null;
  readonly old_value: Buffer | null;
}

export const COMPACT_REV_KEY = 'compact_rev';
