// Starts the real server as a child process, the way an operator does, and hands
// tests what a user has: the admin kube config, the real kubectl, and raw HTTPS.
//
// The server runs under a small sh supervisor whose stdin is a pipe from this
// process: if the test process dies in any way (including SIGKILL from a CI
// timeout, where no exit handler runs), the pipe reaches EOF and the supervisor
// kills the server and removes its data dir. No test run leaves a server behind.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { childProcesses, startEtcd } from '../hack/etcd.js';
import type { EtcdInstance } from '../hack/etcd.js';
import { runCommand, startCommand } from './commands.js';
import type { BackgroundCommand, CommandOptions, CommandResult } from './commands.js';
import { apiRequest, openWatch } from './https-client.js';
import type { ApiResponse, HttpsTarget, RawWatch, RequestBody } from './https-client.js';
import { SERVER_NODE_FLAGS } from '../pkg/server/node-flags.js';

export type Backend = 'sqlite' | 'etcd3';

export const GROUP = 'management.platform.dev';
export const GROUP_VERSION = `${GROUP}/v1`;

/** The backends e2e runs against: both, unless E2E_BACKENDS narrows it (e.g. `sqlite`). */
export function backends(): Backend[] {
  const wanted = (process.env['E2E_BACKENDS'] ?? 'sqlite,etcd3').split(',').map((b) => b.trim());
  return (['sqlite', 'etcd3'] as const).filter((b) => wanted.includes(b));
}

/** The kubectl binary: $KUBECTL (to try another version) or `kubectl` on PATH. */
export function kubectlBinary(): string {
  return process.env['KUBECTL'] || 'kubectl';
}

let kubectlMinor: Promise<number> | undefined;

/** kubectl's client minor version (32 for 1.32, 20 for Debian's 1.20), for output that differs between them. */
export function kubectlMinorVersion(): Promise<number> {
  kubectlMinor ??= (async () => {
    const r = await runCommand(kubectlBinary(), ['version', '--client', '-o', 'json']);
    if (r.code !== 0) {
      throw new Error(`kubectl is not usable (run bash hack/ensure-test-deps.sh): ${r.stderr}`);
    }
    const info = JSON.parse(r.stdout) as { clientVersion?: { minor?: string } };
    const minor = Number.parseInt(info.clientVersion?.minor ?? '', 10);
    if (!Number.isFinite(minor)) throw new Error(`cannot read kubectl's version from: ${r.stdout}`);
    return minor;
  })();
  return kubectlMinor;
}

/**
 * "Who am I?" as kubectl asks it: `auth whoami -o json` (kubectl 1.27+), or, for an
 * older kubectl, which lacks the command, the same SelfSubjectReview POSTed with
 * `kubectl create --raw`. Either prints the review the server answers, as JSON. The
 * caller runs the arguments (with its kube config) and passes `extra` flags such as --as.
 */
export async function kubectlWhoami(
  extra: readonly string[],
): Promise<{ args: string[]; options: CommandOptions }> {
  if ((await kubectlMinorVersion()) >= 27) {
    return { args: ['auth', 'whoami', ...extra, '-o', 'json'], options: {} };
  }
  const review = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  const path = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
  return { args: ['create', '--raw', path, '-f', '-', ...extra], options: { input: review } };
}

export interface TestServer {
  readonly backend: Backend;
  /** `https://127.0.0.1:<port>`, from the server's "serving" log line. */
  readonly url: string;
  /** The server URL in the admin kube config (with the `/kubernetes/management` prefix). */
  readonly apiBase: string;
  readonly kubeconfigPath: string;
  readonly dataDir: string;
  /** The etcd the server stores in (etcd3 backend only), for reading what it holds. */
  readonly etcdEndpoint?: string;
  readonly ca: string;
  readonly token: string;
  /** Runs `kubectl --kubeconfig <admin> <args>`; never throws on a non-zero exit. */
  kubectl(args: readonly string[], options?: CommandOptions): Promise<CommandResult>;
  /** Starts a long-running kubectl (`get -w`, `wait`); the caller stops it. */
  kubectlInBackground(args: readonly string[]): BackgroundCommand;
  /** One HTTPS request to `apiBase + path` as the admin (CA-verified). */
  api(
    method: string,
    path: string,
    body?: RequestBody,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  /** Opens a watch at `apiBase + path` (which must carry `?watch=true`). */
  watch(path: string): Promise<RawWatch>;
  /** The last lines the server wrote to stdout and stderr. */
  logTail(): string;
  /** True while the server process runs. */
  isRunning(): boolean;
  /**
   * SIGKILLs the server process itself, as a crash or the OOM killer would (no
   * shutdown code runs), and waits until it is gone. A given data dir and etcd are
   * kept, so a server started on them finds what this one stored. A later stop() only
   * cleans up.
   */
  kill(): Promise<void>;
  /**
   * SIGTERM, then waits for the process to exit; throws unless it exits with code 0
   * within `withinMs` (default 30 s). Removes the data dir and stops etcd. Idempotent.
   */
  stop(withinMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly backend: Backend;
  /** Extra server flags. */
  readonly args?: readonly string[];
  /** How long to wait for the first "serving" line and `/readyz` = ok. Default 90 s. */
  readonly startTimeoutMs?: number;
  /** A data directory to reuse (kept on stop), to restart a server on what an earlier one stored. */
  readonly dataDir?: string;
  /** An etcd to use (kept on stop) instead of starting one, likewise. */
  readonly etcdEndpoint?: string;
}

const compiled = import.meta.url.endsWith('.js');
/** This file is e2e/harness.ts, or dist/e2e/harness.js once built. */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), compiled ? '../..' : '..');

/**
 * The command that runs the server: the compiled dist/cmd/apiserver/main.js when
 * the tests themselves run from dist/, else the TypeScript source through tsx
 * (`npx tsx --test e2e/...` while developing).
 */
export function serverCommand(): string[] {
  // The server's node flags (pkg/server/node-flags.ts), as npm start and the image run it.
  if (compiled)
    return [
      process.execPath,
      ...SERVER_NODE_FLAGS,
      '--enable-source-maps',
      join(repoRoot, 'dist', 'cmd', 'apiserver', 'main.js'),
    ];
  return [process.execPath, ...SERVER_NODE_FLAGS, '--import', 'tsx', join(repoRoot, 'cmd', 'apiserver', 'main.ts')];
}

// $1 directory to remove afterwards; rest: the command. EOF on stdin (the test
// process is gone): SIGKILL the server. SIGTERM/SIGINT to the supervisor are
// passed on, and the supervisor exits with the server's own exit status.
const SUPERVISOR = `
remove_dir=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
pid=$!
( read _line <&3; kill -9 $pid 2>/dev/null ) &
watcher=$!
exec 3<&-
# From here on the test process may be gone: sh's own messages (such as "Killed"
# for the job) must not go to its dead pipe, or SIGPIPE ends sh before the cleanup.
exec 2>/dev/null
trap 'kill -TERM $pid 2>/dev/null' TERM
trap 'kill -INT $pid 2>/dev/null' INT
wait $pid; status=$?
while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done
kill $watcher 2>/dev/null
if [ -n "$remove_dir" ]; then rm -rf "$remove_dir"; fi
exit $status
`;

const TAIL_LINES = 80;

interface KubeConfigFile {
  'current-context'?: string;
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
  clusters?: Array<{ name: string; cluster: { server: string; 'certificate-authority-data'?: string } }>;
  users?: Array<{ name: string; user: { token?: string } }>;
}

function readAdminKubeconfig(path: string): { server: string; ca: string; token: string } {
  const doc = parseYaml(readFileSync(path, 'utf8')) as KubeConfigFile;
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context']);
  if (!ctx) throw new Error(`${path}: no current context`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.context.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx.context.user)?.user;
  if (!cluster?.server) throw new Error(`${path}: current context has no cluster server`);
  const caData = cluster['certificate-authority-data'];
  if (!caData) throw new Error(`${path}: the cluster has no certificate-authority-data`);
  if (!user?.token) throw new Error(`${path}: the user has no token`);
  return { server: cluster.server, ca: Buffer.from(caData, 'base64').toString('utf8'), token: user.token };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The server under its supervisor shell: the supervisor's other child is the
 * subshell that watches its stdin, which is an `sh`.
 */
function serverPidUnder(supervisor: number | undefined): number | undefined {
  return childProcesses(supervisor).find((c) => c.command !== 'sh')?.pid;
}

export async function startServer(options: StartOptions): Promise<TestServer> {
  const workDir = mkdtempSync(join(tmpdir(), `platform-e2e-${options.backend}-`));
  const dataDir = options.dataDir ?? join(workDir, 'data');
  const kubectlCacheDir = join(workDir, 'kubectl-cache');
  let etcd: EtcdInstance | undefined;
  const cleanupPartial = async (): Promise<void> => {
    await etcd?.stop();
    rmSync(workDir, { recursive: true, force: true });
  };

  const args = ['--secure-port', '0', '--bind-address', '127.0.0.1', '--data-dir', dataDir];
  if (options.backend === 'etcd3') {
    try {
      if (options.etcdEndpoint === undefined) etcd = await startEtcd();
    } catch (err) {
      await cleanupPartial();
      throw err;
    }
    const etcdEndpoint = options.etcdEndpoint ?? (etcd as EtcdInstance).endpoint;
    // A prefix of our own, so nothing could collide even on a shared etcd.
    args.push(
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      etcdEndpoint,
      '--etcd-prefix',
      '/registry-e2e',
    );
  } else {
    args.push('--storage-backend', 'sqlite');
  }
  args.push(...(options.args ?? []));

  const command = serverCommand();
  const child: ChildProcess = spawn(
    '/bin/sh',
    ['-c', SUPERVISOR, 'server-supervisor', workDir, ...command, ...args],
    {
      cwd: repoRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
  child.stdin?.on('error', () => undefined);

  const tail: string[] = [];
  // E2E_SERVER_LOGS=<dir> keeps every server's whole output, for failures the tail does not explain.
  const logDir = process.env['E2E_SERVER_LOGS'];
  let logFile: string | undefined;
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    logFile = join(logDir, `${options.backend}-${Date.now()}-${process.pid}.log`);
  }
  let servingUrl: string | undefined;
  const onLine = (stream: string) => {
    let partial = '';
    return (chunk: string): void => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(`${stream}: ${line}`);
        if (logFile) appendFileSync(logFile, `${stream}: ${line}\n`);
        if (tail.length > TAIL_LINES) tail.shift();
        if (servingUrl === undefined && line.includes('"serving"')) {
          try {
            const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
            if (entry.msg === 'serving' && typeof entry.url === 'string') servingUrl = entry.url;
          } catch {
            // not a JSON log line
          }
        }
      }
    };
  };
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', onLine('stdout'));
  child.stderr?.on('data', onLine('stderr'));

  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((r) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      r();
    }),
  );
  const logTail = (): string => tail.join('\n');
  const describe = (what: string): Error =>
    new Error(`${what}\n--- server: ${[...command, ...args].join(' ')}\n--- output (tail) ---\n${logTail()}`);

  const kill = async (): Promise<void> => {
    if (exit === undefined) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
  };

  // Wait for "serving", then the kube config, then /readyz = ok over verified TLS.
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  const deadline = Date.now() + timeoutMs;
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  let admin: { server: string; ca: string; token: string } | undefined;
  let lastProblem = 'no "serving" log line yet';
  try {
    while (true) {
      if (exit !== undefined)
        throw describe(`the server exited during start (code ${exit.code}, signal ${exit.signal})`);
      if (Date.now() > deadline)
        throw describe(`the server was not ready within ${timeoutMs}ms: ${lastProblem}`);
      if (servingUrl !== undefined) {
        if (admin === undefined && existsSync(kubeconfigPath)) {
          try {
            admin = readAdminKubeconfig(kubeconfigPath);
          } catch (err) {
            lastProblem = (err as Error).message; // maybe half-written: try again
          }
        } else if (admin === undefined) {
          lastProblem = `${kubeconfigPath} does not exist yet`;
        }
        if (admin !== undefined) {
          try {
            const r = await apiRequest(
              { baseUrl: servingUrl, ca: admin.ca, token: '' },
              'GET',
              '/readyz',
              undefined,
              {},
              5000,
            );
            if (r.status === 200 && r.text.trim() === 'ok') break;
            lastProblem = `/readyz answered ${r.status}: ${r.text.slice(0, 300)}`;
          } catch (err) {
            lastProblem = `/readyz: ${(err as Error).message}`;
          }
        }
      }
      await sleep(100);
    }
  } catch (err) {
    await kill();
    await cleanupPartial();
    throw err;
  }

  const url = servingUrl as string;
  const { server: apiBase, ca, token } = admin;
  const target: HttpsTarget = { baseUrl: apiBase, ca, token };
  const kubectlArgs = (extra: readonly string[]): string[] => [
    '--kubeconfig',
    kubeconfigPath,
    '--cache-dir',
    kubectlCacheDir,
    ...extra,
  ];

  let stopping: Promise<void> | undefined;
  let killed = false;
  return {
    backend: options.backend,
    url,
    apiBase,
    kubeconfigPath,
    dataDir,
    ...(options.etcdEndpoint !== undefined || etcd ? { etcdEndpoint: options.etcdEndpoint ?? etcd?.endpoint } : {}),
    ca,
    token,
    kubectl: (a, o) => runCommand(kubectlBinary(), kubectlArgs(a), o),
    kubectlInBackground: (a) => startCommand(kubectlBinary(), kubectlArgs(a)),
    api: (method, path, body, headers) => apiRequest(target, method, path, body, headers),
    watch: (path) => openWatch(target, path),
    logTail,
    isRunning: () => exit === undefined,
    async kill() {
      if (exit !== undefined) return;
      const pid = serverPidUnder(child.pid);
      if (pid === undefined) throw describe('no server process under its supervisor');
      killed = true;
      process.kill(pid, 'SIGKILL');
      await exited;
    },
    stop(withinMs = 30_000) {
      stopping ??= (async () => {
        try {
          if (killed) return;
          if (exit === undefined) {
            child.kill('SIGTERM');
            let timedOut = false;
            const t = setTimeout(() => {
              timedOut = true;
              child.kill('SIGKILL');
            }, withinMs);
            await exited;
            clearTimeout(t);
            if (timedOut) throw describe(`the server did not exit within ${withinMs}ms of SIGTERM`);
          }
          if (exit?.code !== 0) {
            throw describe(`the server exited with code ${exit?.code} (signal ${exit?.signal}) instead of 0`);
          }
        } finally {
          await cleanupPartial();
        }
      })();
      return stopping;
    },
  };
}
