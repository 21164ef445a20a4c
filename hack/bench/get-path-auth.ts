// node dist/hack/bench/get-path-auth.js --base DIR [--calls N] [--rounds R]
//
// Who-and-may-they of one get, as the server asks it, in process and without HTTP:
// the authenticator union and the authorizer chain of two builds' assembled servers
// (this build's and the one under DIR, the `dist` folder of another build kept in the
// worktree, e.g. .tmp/orig/dist), each started on sqlite with its admin key and a
// plain user's key. A serial loop asks each build's chain for a bearer-key request
// (the admin's, then the plain user's reading its own User) the way
// pkg/apiserver/filters.ts does, awaiting only what answers with a promise; rounds
// alternate the builds and report this process's CPU microseconds per request, the
// median counting. With no network and one process, this is the figure of the
// authentication and authorization changes that get-path.js, through HTTPS on a busy
// machine, cannot resolve.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { GROUP, userBody } from './objects.js';

interface User {
  readonly name: string;
  readonly groups: readonly string[];
}

type Awaitable<T> = T | Promise<T>;

/** What this script uses of an assembled server, whichever build it comes from. */
interface Chains {
  readonly label: string;
  readonly authenticate: (req: unknown) => Awaitable<User | null>;
  readonly authorize: (attrs: Record<string, unknown>) => Awaitable<{ decision: string }>;
  readonly adminToken: string;
  readonly stop: () => Promise<void>;
}

interface ServerModules {
  parseFlags(args: string[]): { values: unknown; problems: unknown };
  ServerOptions: new (values: unknown, problems: unknown) => { validate(): string[] };
  buildServerConfig(options: unknown): Promise<{
    api: {
      authenticator: { authenticate(req: unknown): Awaitable<User | null> };
      authorizer: { authorize(attrs: Record<string, unknown>): Awaitable<{ decision: string }> };
    };
    resources: {
      info: { resource: string };
      create?: (ctx: unknown, body: unknown, options: unknown) => Promise<unknown>;
    }[];
  }>;
  startServer(config: unknown): Promise<{ stop(): Promise<void> }>;
}

const READER_KEY = `${'a'.repeat(40)}getpathauthreaderkey0000`;

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    calls: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
  },
});

const work = mkdtempSync(join(tmpdir(), 'getpath-auth-'));

async function assemble(label: string, root: string): Promise<Chains> {
  const load = async (path: string): Promise<Record<string, unknown>> =>
    (await import(pathToFileURL(join(root, path)).href)) as Record<string, unknown>;
  const m = {
    ...(await load('pkg/apiserver/options/index.js')),
    ...(await load('pkg/server/index.js')),
  } as unknown as ServerModules;
  const dataDir = join(work, label);
  const flags = m.parseFlags(['--secure-port', '0', '--data-dir', dataDir, '--storage-backend', 'sqlite']);
  const options = new m.ServerOptions(flags.values, flags.problems);
  const problems = options.validate();
  if (problems.length > 0) throw new Error(problems.join('; '));
  const config = await m.buildServerConfig(options);
  const running = await m.startServer(config);
  const kubeconfig = parseYaml(readFileSync(join(dataDir, 'admin.kubeconfig'), 'utf8')) as {
    users: { user: { token: string } }[];
  };
  const system = { user: { name: 'admin', groups: ['system:masters'] }, namespace: '', warnings: [] };
  const write = { dryRun: false, fieldManager: 'bench', fieldValidation: 'Strict' };
  const create = async (resource: string, body: unknown): Promise<void> => {
    const storage = config.resources.find((r) => r.info.resource === resource);
    await storage?.create?.({ ...system, warnings: [] }, body, write);
  };
  await create('users', userBody('reader'));
  await create('ownedaccesskeys', {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name: 'reader-key' },
    spec: { displayName: 'reader', user: 'reader', key: READER_KEY },
  });
  const authenticator = config.api.authenticator;
  const authorizer = config.api.authorizer;
  return {
    label,
    authenticate: (req) => authenticator.authenticate(req),
    authorize: (attrs) => authorizer.authorize(attrs),
    adminToken: kubeconfig.users[0]?.user.token ?? '',
    stop: () => running.stop(),
  };
}

function request(token: string): unknown {
  // No client certificate on this socket, no front-proxy headers: a bearer key alone.
  // The headers undici sends for the benchmark's gets.
  const headers = {
    host: '127.0.0.1:6443',
    connection: 'keep-alive',
    accept: 'application/json',
    authorization: `Bearer ${token}`,
  };
  const rawHeaders = ['Host', headers.host, 'Connection', headers.connection];
  rawHeaders.push('accept', headers.accept, 'authorization', headers.authorization);
  return { headers, rawHeaders, socket: {} };
}

function attributes(user: User, name: string): Record<string, unknown> {
  return {
    user,
    verb: 'get',
    isResourceRequest: true,
    path: `/apis/${GROUP}/v1/users/${name}`,
    apiGroup: GROUP,
    apiVersion: 'v1',
    resource: 'users',
    subresource: '',
    namespace: '',
    name,
  };
}

/** One request's authentication and authorization, awaiting only what is a promise. */
async function ask(c: Chains, req: unknown, name: string): Promise<void> {
  const found = c.authenticate(req);
  const user = found instanceof Promise ? await found : found;
  if (!user) throw new Error(`${c.label}: not authenticated`);
  const decided = c.authorize(attributes(user, name));
  const result = decided instanceof Promise ? await decided : decided;
  if (result.decision !== 'allow') throw new Error(`${c.label}: ${user.name} may not get ${name}`);
}

/** CPU microseconds per request over `calls` serial requests. */
async function round(c: Chains, req: unknown, name: string, calls: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await ask(c, req, name);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  if (!args.base) throw new Error('--base DIR: the dist folder of the build to compare with');
  const here = resolve(fileURLToPath(new URL('../../', import.meta.url)));
  const builds = [await assemble('this', here), await assemble('base', resolve(args.base))];
  const calls = Number(args.calls);
  const rounds = Number(args.rounds);
  for (const caller of ['admin', 'reader'] as const) {
    const reqs = builds.map((b) => request(caller === 'admin' ? b.adminToken : READER_KEY));
    // Both read the plain user's User: the admin as an admin, the user as itself.
    const name = 'reader';
    // The reader's key works once each identity cache has seen it.
    for (const [i, b] of builds.entries()) {
      for (let tries = 0; ; tries++) {
        try {
          await ask(b, reqs[i], name);
          break;
        } catch (err) {
          if (tries > 100) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await round(b, reqs[i], name, calls); // warm (JIT)
    }
    const figures = builds.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < builds.length; j++) {
        const i = (r + j) % builds.length;
        figures[i]!.push(await round(builds[i]!, reqs[i], name, calls));
      }
    }
    const ratios = figures[0]!.map((x, r) => x / (figures[1]![r] ?? NaN));
    console.log(`${caller} key, get users/${name}, ${rounds} rounds of ${calls} requests:`);
    for (const [i, b] of builds.entries()) {
      const f = figures[i]!;
      console.log(
        `  ${b.label}: CPU us per request ${f.map((x) => x.toFixed(2)).join(', ')} (median ${median(f).toFixed(2)})`,
      );
    }
    console.log(
      `  this/base by round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}x)`,
    );
  }
  for (const b of builds) await b.stop();
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
