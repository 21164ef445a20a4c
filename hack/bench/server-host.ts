// Runs the real API server (the same ServerOptions, config and startServer as
// cmd/apiserver) in a forked child, so the harness can also ask it for its memory
// (after a full GC) and have it seed objects in-process when the load itself is not
// what is measured. Its logs go wherever the harness points stdout.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ServerOptions, parseFlags } from '../../pkg/apiserver/options/index.js';
import {
  ADMIN_KUBECONFIG_FILE,
  buildServerConfig,
  startServer,
  type RunningServer,
  type ServerConfig,
} from '../../pkg/server/index.js';
import type { RequestContext } from '../../pkg/registry/rest/interfaces.js';
import { allocationProfile, type AllocationCommand } from './allocation-profiler.js';
import { addBallast } from './ballast.js';
import { gcStats } from './gc-stats.js';
import { heapSampling, type HeapSamplingCommand } from './heap-sampling.js';
import { heapSnapshot, memory } from './memory.js';
import { profile } from './profiler.js';
import { userBody } from './objects.js';
import { threadRoles } from './thread-roles.js';

export interface HostStarted {
  readonly origin: string;
  readonly token: string;
  readonly pid: number;
  readonly certPem: string;
  readonly keyPem: string;
}

export type HostMessage =
  | { id: number; start: { args: string[] } }
  | { id: number; memory: true }
  | { id: number; heapSnapshot: string }
  | { id: number; cpu: true }
  | { id: number; gcStats: true }
  | { id: number; ballast: { bytes: number } }
  | { id: number; allocations: AllocationCommand }
  | { id: number; seedUsers: { prefix: string; from: number; count: number; concurrency: number } }
  | { id: number; profile: { start: true } | { stop: string } }
  | { id: number; heapSampling: HeapSamplingCommand }
  | { id: number; threads: true }
  | { id: number; stop: true };

let running: RunningServer | undefined;
let config: ServerConfig | undefined;

async function start(args: string[]): Promise<HostStarted> {
  const flags = parseFlags(args);
  const options = new ServerOptions(flags.values, flags.problems);
  const problems = options.validate();
  if (problems.length > 0) throw new Error(problems.join('; '));
  config = await buildServerConfig(options);
  running = await startServer(config);
  const dataDir = config.options.dataDir;
  const kubeconfig = parseYaml(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as {
    users: { user: { token: string } }[];
  };
  return {
    origin: running.url,
    token: kubeconfig.users[0]?.user.token ?? '',
    pid: process.pid,
    certPem: readFileSync(join(dataDir, 'pki', 'apiserver.crt'), 'utf8'),
    keyPem: readFileSync(join(dataDir, 'pki', 'apiserver.key'), 'utf8'),
  };
}

const SYSTEM: RequestContext = {
  user: { name: 'admin', groups: ['system:masters'] },
  namespace: '',
  warnings: [],
};

/** Creates Users through the registry (validation, defaults, managedFields), skipping HTTP. */
async function seedUsers(
  prefix: string,
  from: number,
  count: number,
  concurrency: number,
): Promise<{ created: number }> {
  const users = config?.resources.find((r) => r.info.resource === 'users');
  if (!users?.create) throw new Error('no users resource');
  let next = from;
  let created = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < from + count) {
        const n = next++;
        await users.create!({ ...SYSTEM, warnings: [] }, userBody(`${prefix}-${n}`), {
          dryRun: false,
          fieldManager: 'bench',
          fieldValidation: 'Strict',
        });
        created++;
      }
    }),
  );
  return { created };
}

if (process.send) {
  process.on('message', (msg: HostMessage) => {
    const reply = (body: Record<string, unknown>): void => void process.send?.({ id: msg.id, ...body });
    const fail = (err: unknown): void =>
      reply({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    if ('start' in msg) start(msg.start.args).then((r) => reply({ result: r }), fail);
    else if ('memory' in msg) reply({ result: memory() });
    else if ('heapSnapshot' in msg) reply({ result: heapSnapshot(msg.heapSnapshot) });
    else if ('cpu' in msg) reply({ result: process.cpuUsage() });
    else if ('gcStats' in msg) reply({ result: gcStats() });
    else if ('ballast' in msg) reply({ result: addBallast(msg.ballast.bytes) });
    else if ('allocations' in msg) allocationProfile(msg.allocations).then((r) => reply({ result: r }), fail);
    else if ('profile' in msg) profile(msg.profile).then((r) => reply({ result: r }), fail);
    else if ('threads' in msg) threadRoles().then((r) => reply({ result: r }), fail);
    else if ('heapSampling' in msg) heapSampling(msg.heapSampling).then((r) => reply({ result: r }), fail);
    else if ('seedUsers' in msg) {
      const s = msg.seedUsers;
      seedUsers(s.prefix, s.from, s.count, s.concurrency).then((r) => reply({ result: r }), fail);
    } else {
      (running?.stop() ?? Promise.resolve()).then(() => reply({ result: {} }), fail);
    }
  });
  process.on('disconnect', () => {
    void (running?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  });
}
