// Files other programs read (kube configs, certificates, signing keys) are written
// atomically: a reader sees the old file or the new one, never half of one, and a
// crash leaves no truncated key behind.

import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

export interface AtomicWriteOptions {
  /**
   * Never replace an existing file: fail with EEXIST instead. The check and the
   * write are one step (a hard link of the finished temporary file), so a file
   * that appears in between is not overwritten either.
   */
  readonly exclusive?: boolean;
}

export function writeFileAtomic(
  path: string,
  data: string,
  mode: number,
  options: AtomicWriteOptions = {},
): void {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  // The mode is set at creation so a secret is never readable by others, not even briefly.
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    // rename replaces whatever is there; link refuses to.
    if (options.exclusive) linkSync(tmp, path);
    else renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}
