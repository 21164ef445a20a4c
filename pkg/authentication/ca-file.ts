// A CA bundle read from a file and read again when the file changes, without a
// restart (k8s.io/apiserver's dynamiccertificates DynamicFileCAContent): the
// --client-ca-file and --requestheader-client-ca-file flags. A file watch notices
// most changes at once (including the symlink swap of a mounted Secret or
// ConfigMap, hence the watch on the directory); a slow poll catches what a watch
// can miss. A new content that is not a valid bundle is logged and ignored: the
// bundle in force stays, as upstream keeps its last good content.

import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { compileCaBundle, type CaBundle, type CaBundleSource } from './ca-bundle.js';
import type { Logger } from '../util/log/index.js';

export interface CaFileOptions {
  /** The flag that named the file, for messages. */
  readonly flag: string;
  readonly logger?: Logger;
  /** How often the file is read again whatever the watch says (default 60 s, as upstream). */
  readonly pollIntervalMs?: number;
}

export class CaFile implements CaBundleSource {
  private bundle: CaBundle;
  private content: string;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<() => void>();

  /** Reads the file once; throws (naming the flag) when it cannot be read or holds no CA. */
  constructor(
    readonly path: string,
    private readonly options: CaFileOptions,
  ) {
    let pem: string;
    try {
      pem = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`${options.flag}: cannot read "${path}": ${(err as Error).message}`);
    }
    try {
      this.bundle = compileCaBundle(pem);
    } catch (err) {
      throw new Error(`${options.flag} "${path}": ${(err as Error).message}`);
    }
    this.content = pem;
  }

  current(): CaBundle {
    return this.bundle;
  }

  /** Called after every change of the bundle in force; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts watching the file; idempotent. */
  start(): void {
    if (this.poll) return;
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
        // Kubernetes mounts swap a `..data` symlink: any change in the directory may be ours.
        if (file === null || file === name || file.startsWith('..')) this.reload();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // No watch on this file system: the poll alone keeps the bundle current.
    }
    this.poll = setInterval(() => this.reload(), this.options.pollIntervalMs ?? 60_000);
    this.poll.unref();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.poll);
    this.poll = undefined;
  }

  /** Reads the file again and switches to its bundle when it changed and is valid. */
  reload(): void {
    let pem: string;
    try {
      pem = readFileSync(this.path, 'utf8');
    } catch (err) {
      // Mid-rotation the file may briefly be missing: keep the bundle, the next event retries.
      this.options.logger?.error('CA file cannot be read; keeping the CA bundle in force', {
        flag: this.options.flag,
        file: this.path,
        error: (err as Error).message,
      });
      return;
    }
    if (pem === this.content) return;
    try {
      this.bundle = compileCaBundle(pem);
    } catch (err) {
      this.options.logger?.error('CA file holds no valid CA bundle; keeping the CA bundle in force', {
        flag: this.options.flag,
        file: this.path,
        error: (err as Error).message,
      });
      return;
    }
    this.content = pem;
    this.options.logger?.info('CA file changed: new CA bundle in force', {
      flag: this.options.flag,
      file: this.path,
      certificateAuthorities: this.bundle.roots.map((r) => r.subject.replace(/\n/g, ',')),
    });
    for (const listener of this.listeners) listener();
  }
}
