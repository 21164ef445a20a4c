// Forked helper processes (the load generator, server hosts, bare servers), each
// spoken to by request/response messages over IPC. From dist/ they run as .js;
// from the sources (tsx) as .ts through the tsx loader.

import { fork, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';

const fromSource = import.meta.url.endsWith('.ts');

export interface ChildOptions {
  logFile?: string;
  gc?: boolean;
  maxOldSpaceMb?: number;
  fromDir?: string;
  /**
   * More node/V8 flags for the child (e.g. an A/B of a heap setting). A server host
   * runs with the server's own flags first (SERVER_NODE_FLAGS, as every launcher of
   * the server does), so these override them: the last of a V8 flag wins.
   */
  nodeFlags?: readonly string[];
}

/** The node flags a forked `module` runs with. */
export function execArgvOf(module: string, options: ChildOptions = {}): string[] {
  return [
    ...(fromSource ? ['--import', 'tsx'] : []),
    ...(options.gc ? ['--expose-gc'] : []),
    ...(options.maxOldSpaceMb ? [`--max-old-space-size=${options.maxOldSpaceMb}`] : []),
    ...(module === 'server-host' ? SERVER_NODE_FLAGS : []),
    ...(options.nodeFlags ?? []),
  ];
}

export class Child {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private exited = false;

  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {
    proc.on('message', (msg: { id: number; result?: unknown; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`${name}: ${msg.error}`));
      else p.resolve(msg.result);
    });
    proc.on('exit', (code, signal) => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`${name} exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  /**
   * Forks `module` (a sibling file, without extension). `logFile` receives its stdout and
   * stderr. `dir` forks the module of that name from another build's hack/bench folder
   * instead (an A/B of two builds: see get-path.ts).
   */
  static start(name: string, module: string, options: ChildOptions = {}): Child {
    // fromDir: another build's hack/bench directory (an A/B of two builds in one run).
    const base = options.fromDir ? pathToFileURL(`${options.fromDir}/`) : new URL('./', import.meta.url);
    const file = fileURLToPath(new URL(`./${module}${fromSource ? '.ts' : '.js'}`, base));
    const execArgv = execArgvOf(module, options);
    let fd: number | 'ignore' = 'ignore';
    if (options.logFile) fd = openSync(options.logFile, 'a');
    const proc = fork(file, [], { execArgv, stdio: ['ignore', fd, fd, 'ipc'] });
    if (typeof fd === 'number') closeSync(fd);
    return new Child(name, proc);
  }

  get pid(): number {
    return this.proc.pid ?? 0;
  }

  /** Its CPU time so far, µs (for the children that answer `{ cpu: true }`, e.g. server-host). */
  async cpuMicros(): Promise<number> {
    const u = await this.call<{ user: number; system: number }>({ cpu: true });
    return u.user + u.system;
  }

  call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.proc.send({ id, ...message });
    });
  }

  /** Asks the child to finish (it exits when IPC closes), then makes sure it has. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.disconnect();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await gone;
    clearTimeout(timer);
  }
}
