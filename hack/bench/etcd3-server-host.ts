// A server host (server-host.ts: the assembly of cmd/apiserver, with the server's node
// flags) started on an etcd3 backend, for the focused scripts that measure one server
// next to its etcd (thread-cpu.ts, etcd-frames.ts).

import { Child } from './children.js';
import type { HostStarted } from './server-host.js';

export interface Etcd3HostOptions {
  /** Where the server's stdout and stderr go. */
  readonly logFile: string;
  readonly dataDir: string;
  readonly etcdEndpoint: string;
  /** More node flags after the server's own (see children.ts). */
  readonly nodeFlags?: readonly string[];
  /** More apiserver flags. */
  readonly serverArgs?: readonly string[];
}

export async function startEtcd3Host(o: Etcd3HostOptions): Promise<{ host: Child; started: HostStarted }> {
  const host = Child.start('server', 'server-host', {
    logFile: o.logFile,
    ...(o.nodeFlags ? { nodeFlags: o.nodeFlags } : {}),
  });
  const args = ['--secure-port', '0', '--data-dir', o.dataDir, '--storage-backend', 'etcd3'];
  args.push('--etcd-servers', o.etcdEndpoint, ...(o.serverArgs ?? []));
  try {
    return { host, started: await host.call<HostStarted>({ start: { args } }) };
  } catch (err) {
    await host.stop();
    throw err;
  }
}
