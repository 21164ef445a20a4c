// Building the small Go programs the tests compare with (hack/smd-oracle, the reference
// structured-merge-diff; hack/helm-render, Helm's template engine), once per change of
// their sources or of the Go toolchain, offline and without cgo.

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Runs a command to completion; throws only when it cannot be started. */
export function runCommand(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; maxBuffer?: number } = {},
): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) throw new Error(`${cmd} could not be started: ${r.error.message}`);
  return r;
}

export interface GoProgram {
  /** The binary's name, and its folder under `<root>/.tmp/`. */
  readonly name: string;
  /** The repository root. */
  readonly root: string;
  /** Where the program's sources are (hack/<name>). */
  readonly srcDir: string;
  /** The files of srcDir whose content decides whether a build is current. */
  readonly sources: readonly string[];
  /** What the build's environment adds (module mode, GOPATH, ...). */
  readonly env: Readonly<Record<string, string>>;
  /** Lays out a build directory when the sources cannot be built where they are. */
  readonly prepare?: (buildDir: string) => void;
}

/**
 * The path of the program's binary, built unless a build of the same sources and Go
 * exists. Built under a private name and renamed, so that concurrent test files never
 * run a half-written binary. Throws with go's output when the build fails.
 */
export function buildGoProgram(p: GoProgram): string {
  const goVersion = runCommand('go', ['version']);
  if (goVersion.status !== 0) throw new Error(`go version failed: ${goVersion.stderr}`);
  const hash = createHash('sha256');
  for (const file of p.sources) hash.update(readFileSync(join(p.srcDir, file)));
  const outDir = join(p.root, '.tmp', p.name, hash.update(goVersion.stdout).digest('hex').slice(0, 16));
  const bin = join(outDir, p.name);
  if (existsSync(bin)) return bin;
  mkdirSync(outDir, { recursive: true });
  const buildDir = p.prepare ? join(outDir, `src.${process.pid}`) : p.srcDir;
  if (p.prepare) {
    rmSync(buildDir, { recursive: true, force: true });
    p.prepare(buildDir);
  }
  const partial = `${bin}.${process.pid}.partial`;
  const build = runCommand('go', ['build', '-o', partial, '.'], {
    cwd: buildDir,
    env: { ...process.env, GOCACHE: join(p.root, '.tmp', 'go-build-cache'), CGO_ENABLED: '0', ...p.env },
  });
  if (p.prepare) rmSync(buildDir, { recursive: true, force: true });
  if (build.status !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`building hack/${p.name} failed:\n${build.stdout}${build.stderr}`);
  }
  renameSync(partial, bin);
  return bin;
}
