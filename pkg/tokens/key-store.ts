// Where the signing keys are kept between restarts and shared between replicas:
// a file in the data directory (one replica, the embedded database) or a Secret on
// the host cluster (several replicas). Saves are compare-and-swap on an opaque
// version, so two replicas that generate or rotate at the same moment cannot both
// win: the loser reloads and uses the winner's keys.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../util/atomic-write.js';

export interface StoredKeys {
  /** The serialized key set (see serializeKeySet). */
  readonly data: string;
  /** Opaque; passed back to save() to say "only if nobody wrote since". */
  readonly version: string;
}

export interface SigningKeyStore {
  /** For log lines and errors: `file /data/tokens/signing-keys.json`, `secret ns/name`. */
  readonly description: string;
  load(): Promise<StoredKeys | undefined>;
  /**
   * Writes `data` when the stored version is still `version` ('' meaning: nothing
   * stored yet). Resolves false when someone else wrote first.
   */
  save(data: string, version: string): Promise<boolean>;
}

export const KEY_SET_FILE = 'signing-keys.json';

/** `<data-dir>/tokens/signing-keys.json`, readable by the server's user only. */
export class FileKeyStore implements SigningKeyStore {
  readonly description: string;
  private readonly path: string;

  constructor(private readonly dir: string) {
    this.path = join(dir, KEY_SET_FILE);
    this.description = `file ${this.path}`;
  }

  load(): Promise<StoredKeys | undefined> {
    let data: string;
    try {
      data = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve(undefined);
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return Promise.resolve({ data, version: versionOf(data) });
  }

  async save(data: string, version: string): Promise<boolean> {
    // One process owns a data directory (the database holds a lock on it), so this
    // check and the rename below cannot interleave with another writer.
    const current = await this.load();
    if ((current?.version ?? '') !== version) return false;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Replaced whole: a crash never leaves half a private key behind.
    writeFileAtomic(this.path, data, 0o600);
    return true;
  }
}

function versionOf(data: string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * What SecretKeyStore needs of the host cluster: one Secret's data, read and
 * written with Kubernetes' optimistic concurrency. pkg/hostcluster's client is
 * adapted to this in the wiring, so this package does not depend on it.
 */
export interface SecretAccess {
  /** The Secret's data (values already base64-decoded) and resourceVersion, or undefined when absent. */
  get(
    namespace: string,
    name: string,
  ): Promise<{ data: Record<string, string>; resourceVersion: string } | undefined>;
  /** Resolves false when the Secret already exists. */
  create(namespace: string, name: string, data: Record<string, string>): Promise<boolean>;
  /** Resolves false on a resourceVersion conflict. */
  update(
    namespace: string,
    name: string,
    data: Record<string, string>,
    resourceVersion: string,
  ): Promise<boolean>;
}

/** The key set in one key of a host Secret (`--signing-key-secret <ns>/<name>`), shared by all replicas. */
export class SecretKeyStore implements SigningKeyStore {
  readonly description: string;

  constructor(
    private readonly secrets: SecretAccess,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.description = `secret ${namespace}/${name}`;
  }

  async load(): Promise<StoredKeys | undefined> {
    const secret = await this.secrets.get(this.namespace, this.name);
    const data = secret?.data[KEY_SET_FILE];
    if (!secret || data === undefined) return undefined;
    return { data, version: secret.resourceVersion };
  }

  async save(data: string, version: string): Promise<boolean> {
    const existing = await this.secrets.get(this.namespace, this.name);
    if (!existing) {
      if (version !== '') return false;
      return this.secrets.create(this.namespace, this.name, { [KEY_SET_FILE]: data });
    }
    // A Secret made ahead of time (by an operator, say) without our key is ours to fill.
    const ours = existing.data[KEY_SET_FILE] !== undefined;
    if (ours ? existing.resourceVersion !== version : version !== '') return false;
    // Other keys of the Secret are kept: it may be shared with whoever made it.
    return this.secrets.update(
      this.namespace,
      this.name,
      { ...existing.data, [KEY_SET_FILE]: data },
      existing.resourceVersion,
    );
  }
}

/** A store in memory: tests, and replicas in one process sharing it. */
export class MemoryKeyStore implements SigningKeyStore {
  readonly description = 'memory';
  private stored: StoredKeys | undefined;
  private writes = 0;

  load(): Promise<StoredKeys | undefined> {
    return Promise.resolve(this.stored);
  }

  save(data: string, version: string): Promise<boolean> {
    if ((this.stored?.version ?? '') !== version) return Promise.resolve(false);
    this.stored = { data, version: String(++this.writes) };
    return Promise.resolve(true);
  }
}
