// Starts a throwaway etcd on loopback for tests, e2e runs and benchmarks.
//
// etcd runs under a tiny sh supervisor whose stdin is a pipe from this process.
// When this process goes away for any reason (stop(), a normal exit, a crash, a
// SIGKILL from a test runner's timeout) the pipe reaches EOF, the supervisor kills
// etcd, waits for it and removes the temporary data dir. That is the only way to
// guarantee no etcd outlives a test run: 'exit' handlers do not run on signals.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface StartEtcdOptions {
  /** Use this data dir (kept on stop, so a later start can reuse it). Default: a fresh temp dir, removed on stop. */
  readonly dataDir?: string;
  /** Extra etcd flags, e.g. `--experimental-watch-progress-notify-interval=1s`. */
  readonly args?: readonly string[];
  /** How long to wait for etcd to report healthy. Default 30s. */
  readonly startTimeoutMs?: number;
  /** Serve clients over TLS (https endpoint). */
  readonly tls?: EtcdTLSFiles;
  /** Fixed ports, to restart an etcd on its old data dir at the same address. Default: free ones. */
  readonly clientPort?: number;
  readonly peerPort?: number;
  /** Member name (default: a random one). A member restarted on its data dir must keep its name. */
  readonly name?: string;
  /**
   * `--initial-cluster` for a member of a cluster (`name=http://127.0.0.1:<peer>,...`);
   * default: this member alone. Start the members together: none is healthy before a quorum is.
   */
  readonly initialCluster?: string;
}

export interface EtcdTLSFiles {
  /** PEM files: the serving certificate (for 127.0.0.1) and key, and the CA that signed it. */
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  /** With these, etcd demands client certificates signed by caFile; the harness uses this one. */
  readonly clientCertFile?: string;
  readonly clientKeyFile?: string;
}

export interface EtcdInstance {
  /** Client URL, `http://127.0.0.1:<port>` (`https://` with `tls`). */
  readonly endpoint: string;
  readonly dataDir: string;
  readonly clientPort: number;
  readonly peerPort: number;
  /** Kills etcd and (for a temp data dir) removes its data. Idempotent. */
  stop(): Promise<void>;
  /**
   * Sends a signal to the etcd process itself, not its supervisor: SIGSTOP freezes it
   * (what a partition or a stalled disk looks like to clients), SIGCONT thaws it.
   */
  signal(sig: NodeJS.Signals): void;
}

// $1 etcd binary, $2 data dir to remove afterwards ("" = keep), rest: etcd flags.
// EOF on stdin: SIGTERM etcd (graceful). SIGTERM/INT/HUP to the supervisor: SIGKILL etcd.
// Background jobs of a non-interactive sh read /dev/null, so the watcher reads
// the pipe through fd 3 explicitly.
const SUPERVISOR = `
etcd_bin=$1; remove_dir=$2; shift 2
exec 3<&0
"$etcd_bin" "$@" </dev/null 3<&- &
pid=$!
( read _line <&3; kill $pid 2>/dev/null ) &
watcher=$!
# Our stderr is this process's pipe; once it is gone, the shell's own messages
# (job notices) would raise SIGPIPE and kill it before it can clean up.
exec 3<&- 2>/dev/null
trap '' PIPE
trap 'kill -9 $pid 2>/dev/null' TERM INT HUP
wait $pid; status=$?
while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done
kill $watcher 2>/dev/null
if [ -n "$remove_dir" ]; then rm -rf "$remove_dir"; fi
exit $status
`;

const STDERR_TAIL_BYTES = 8192;

export function findEtcd(): string {
  const candidates = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'etcd'));
  candidates.push('/usr/bin/etcd');
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  throw new Error(
    'etcd binary not found on PATH or at /usr/bin/etcd; install it with `bash hack/ensure-test-deps.sh`',
  );
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** `count` distinct free loopback ports (all held open while picking, so they differ). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    const ports: number[] = [];
    for (const s of servers) ports.push(await listen(s));
    return ports;
  } finally {
    await Promise.all(
      servers.map(
        (s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())),
      ),
    );
  }
}

/** A JSON request to etcd's HTTP endpoints, over TLS when etcd serves it. */
export function etcdJson(
  url: string,
  method: 'GET' | 'POST',
  tls: EtcdTLSFiles | undefined,
  timeoutMs = 2000,
  body: unknown = {},
): Promise<unknown> {
  const secure = url.startsWith('https:');
  const options: HttpsRequestOptions = { method, timeout: timeoutMs };
  if (secure && tls) {
    options.ca = readFileSync(tls.caFile);
    if (tls.clientCertFile && tls.clientKeyFile) {
      options.cert = readFileSync(tls.clientCertFile);
      options.key = readFileSync(tls.clientKeyFile);
    }
  }
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify(body) : undefined);
  });
}

/**
 * etcd at `endpoint` has a leader and is the one we started: if our ports were
 * taken, another etcd could be answering there, so its member name must be ours.
 */
async function healthy(endpoint: string, name: string, tls: EtcdTLSFiles | undefined): Promise<boolean> {
  try {
    const health = (await etcdJson(`${endpoint}/health`, 'GET', tls)) as { health?: unknown };
    if (health.health !== 'true') return false;
    const list = (await etcdJson(`${endpoint}/v3/cluster/member/list`, 'POST', tls)) as {
      members?: Array<{ name?: unknown }>;
    };
    return (list.members ?? []).some((m) => m.name === name);
  } catch {
    return false;
  }
}

function memberName(): string {
  return `test-${process.pid}-${randomBytes(4).toString('hex')}`;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdInstance> {
  const bin = findEtcd();
  // A port picked here can be taken by someone else before etcd binds it; retry then.
  const fixedPorts = options.clientPort !== undefined || options.peerPort !== undefined;
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(bin, options);
    } catch (err) {
      lastError = err as Error;
      if (fixedPorts || !/address already in use/.test(lastError.message)) throw lastError;
    }
  }
  throw lastError ?? new Error('etcd did not start');
}

async function startOnce(bin: string, options: StartEtcdOptions): Promise<EtcdInstance> {
  const [freeClient, freePeer] = (await freePorts(2)) as [number, number];
  const clientPort = options.clientPort ?? freeClient;
  const peerPort = options.peerPort ?? freePeer;
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'etcd-test-'));
  const tls = options.tls;
  const endpoint = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const name = options.name ?? memberName();
  const flags = [
    `--name=${name}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${endpoint}`,
    `--advertise-client-urls=${endpoint}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${options.initialCluster ?? `${name}=${peer}`}`,
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-outputs=stderr',
    '--log-level=warn',
    ...(tls ? [`--cert-file=${tls.certFile}`, `--key-file=${tls.keyFile}`] : []),
    ...(tls?.clientCertFile ? ['--client-cert-auth', `--trusted-ca-file=${tls.caFile}`] : []),
    ...(options.args ?? []),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env };
  // etcd 3.4 refuses to start on architectures it does not officially support.
  if (process.arch !== 'x64' && env['ETCD_UNSUPPORTED_ARCH'] === undefined) {
    env['ETCD_UNSUPPORTED_ARCH'] = process.arch === 'arm64' ? 'arm64' : process.arch;
  }

  const child = spawn(
    '/bin/sh',
    ['-c', SUPERVISOR, 'etcd-supervisor', bin, ownDir ? dataDir : '', ...flags],
    {
      stdio: ['pipe', 'ignore', 'pipe'],
      env,
    },
  );
  let stderrTail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  // Nothing is written to the supervisor; an EPIPE after it died must not crash us.
  child.stdin?.on('error', () => undefined);

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  // A forgotten stop() must not keep the test process alive: the supervisor still
  // cleans up when this process exits and the pipe closes.
  unref(child);

  const describe = (what: string): Error =>
    new Error(
      `${what} (etcd ${bin}, client ${endpoint}, data dir ${dataDir})\n--- etcd stderr (tail) ---\n${stderrTail.trim()}`,
    );

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (exited === undefined) {
        child.stdin?.end();
        // EOF asks etcd to shut down gracefully (well under a second); should it hang,
        // SIGTERM to the supervisor makes it SIGKILL etcd.
        const timer = setTimeout(() => child.kill('SIGTERM'), 10_000);
        await exitPromise;
        clearTimeout(timer);
      }
    })();
    return stopped;
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  while (true) {
    if (exited !== undefined) {
      throw describe(`etcd exited before becoming healthy (code ${exited.code}, signal ${exited.signal})`);
    }
    if (await healthy(endpoint, name, tls)) break;
    if (Date.now() > deadline) {
      await stop();
      throw describe(`etcd did not become healthy within ${options.startTimeoutMs ?? 30_000}ms`);
    }
    await sleep(100);
  }
  const signal = (sig: NodeJS.Signals): void => {
    const pid = etcdPidUnder(child.pid);
    if (pid === undefined) throw describe('no etcd process under its supervisor');
    process.kill(pid, sig);
  };
  return { endpoint, dataDir, clientPort, peerPort, stop, signal };
}

/** The etcd child of the supervisor shell, found by its command name. */
function etcdPidUnder(supervisor: number | undefined): number | undefined {
  return childProcesses(supervisor).find((c) => c.command === 'etcd')?.pid;
}

/** The children of a process and their command names (Linux /proc); none when it is gone. */
export function childProcesses(parent: number | undefined): Array<{ pid: number; command: string }> {
  if (parent === undefined) return [];
  let children: string;
  try {
    children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8');
  } catch {
    return [];
  }
  const out: Array<{ pid: number; command: string }> = [];
  for (const pid of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
    try {
      out.push({ pid, command: readFileSync(`/proc/${pid}/comm`, 'utf8').trim() });
    } catch {
      // Gone already.
    }
  }
  return out;
}

function unref(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdin, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}
