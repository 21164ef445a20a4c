// node dist/hack/bench/create-calls.js [--creates N] [--out FILE] > /dev/null
//
// What one create does at 1 client, call by call and step by step: the real server
// (the same ServerOptions, buildServerConfig and startServer as cmd/apiserver) on a
// loopback etcd of its own, in THIS process, with one keep-alive HTTPS client making
// serial creates of each kind the harness writes (Users, Teams, Global Secrets, an
// administrator's OwnedAccessKey of a User, and a plain user's key of their own).
//
// Counted per create, without any logging in the server:
//   - the storage calls, at the KV the registry and the caches use (MeteredKV: get,
//     range, create, update, delete, and the revision read `currentRevision`);
//   - the etcd calls on the wire: every HTTP/2 stream the server opens to etcd, by
//     gRPC method (the unary transport's Range/Txn, and any Watch stream), so a call
//     made around the KV (a batched revision read, a progress request) shows too;
//   - the watch caches' put events, and the objects they decoded: an event that finds
//     the create's own object (its Txn answered first) is applied without a decode.
// And a wall-clock timeline (median over the creates of each kind, µs after the
// request's first byte reached the server): request received, authentication,
// authorization, the Store's create, admission, each storage call and each etcd
// stream's request/response, the response's end() and the client's receipt.
//
// Everything is observed by wrapping prototypes and the assembled config from this
// script; nothing in pkg/ knows. The server's own JSON log goes to stdout (hence the
// redirect); the figures go to stderr, and with --out to a JSON file as well.

import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { startEtcd } from '../etcd.js';
import { ServerOptions, parseFlags } from '../../pkg/apiserver/options/index.js';
import { ADMIN_KUBECONFIG_FILE, buildServerConfig, startServer } from '../../pkg/server/index.js';
import { MeteredKV } from '../../pkg/storage/metered-kv.js';
import { Store } from '../../pkg/registry/generic/store.js';
import { Etcd3Watch } from '../../pkg/storage/etcd3/watch.js';
import { Cacher } from '../../pkg/storage/cacher/cacher.js';
import { AdmissionChain } from '../../pkg/authorization/admission/index.js';
import type { Authenticator } from '../../pkg/authentication/interfaces.js';
import type { Authorizer } from '../../pkg/authorization/interfaces.js';
import { API_PATH, GROUP, SECRETS_NAMESPACE, accessKeyBody, sharedSecretBody, userBody } from './objects.js';

const { values: args } = parseArgs({
  options: {
    creates: { type: 'string', default: '200' },
    out: { type: 'string' },
  },
});

// ---- the trace ---------------------------------------------------------------

/** Events of the create in flight (one client: at most one at a time), µs on one clock. */
let trace: Array<{ label: string; t: number }> | undefined;
/** Storage and etcd calls counted while a kind's creates run. */
const counts = new Map<string, number>();

function mark(label: string): void {
  trace?.push({ label, t: performance.now() * 1000 });
}
function count(what: string): void {
  if (trace) counts.set(what, (counts.get(what) ?? 0) + 1);
}

/** Wraps `target[method]` so that its calls are counted and stamped (start, settle). */
function observe(target: object, method: string, name: string, counted: boolean): void {
  const holder = target as Record<string, unknown>;
  const inner = holder[method] as (...a: unknown[]) => unknown;
  holder[method] = function (this: unknown, ...a: unknown[]): unknown {
    if (counted) count(`kv ${name}`);
    mark(`${name} start`);
    const result = inner.apply(this, a);
    if (result instanceof Promise) {
      return result.finally(() => mark(`${name} end`));
    }
    mark(`${name} end`);
    return result;
  };
}

// The etcd calls on the wire: every stream the server opens on an HTTP/2 session to
// etcd (the unary transport reads http2.connect from the module at call time, and
// grpc-js requires it, so both see this one).
const connect = http2.connect;
http2.connect = ((...a: Parameters<typeof http2.connect>) => {
  const session = connect(...a);
  const request = session.request.bind(session);
  session.request = (headers, options) => {
    const path = String(headers?.[':path'] ?? '?');
    const method = path.slice(path.lastIndexOf('/') + 1);
    count(`etcd ${method}`);
    mark(`etcd ${method} sent`);
    const stream = request(headers, options);
    stream.once('response', () => mark(`etcd ${method} answered`));
    // When each DATA frame reached the stream: a create's watch events (two streams on
    // etcd 3.4) may arrive, and be handled, before its Txn's answer.
    stream.on('data', () => mark(`etcd ${method} data`));
    return stream;
  };
  return session;
}) as typeof http2.connect;
syncBuiltinESMExports();

for (const op of ['get', 'range', 'create', 'update', 'delete', 'currentRevision']) {
  observe(MeteredKV.prototype, op, `storage ${op}`, true);
}
observe(Store.prototype, 'create', 'registry create', false);
// A watch response's handling (its events to the cache or the write-order watch).
observe(Etcd3Watch.prototype, 'onResponse', 'watch response handled', false);
observe(AdmissionChain.prototype, 'admit', 'admission', false);
// Whether a create's watch event finds the write's own object (handed over by
// expectWrite when the Txn's answer came first) or decodes the event's bytes.
const cacher = Cacher.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
for (const [method, what] of [
  ['entryOfEvent', 'cache: put events applied'],
  ['entryOf', 'cache: objects decoded'],
] as const) {
  const inner = cacher[method]!;
  cacher[method] = function (this: unknown, ...a: unknown[]): unknown {
    count(what);
    return inner.apply(this, a);
  };
}

// The request's arrival and the response's end, on the HTTPS server the assembly makes.
const emit = https.Server.prototype.emit;
https.Server.prototype.emit = function (
  this: https.Server,
  event: string | symbol,
  ...a: unknown[]
): boolean {
  if (event === 'request') mark('request received');
  return emit.apply(this, [event, ...a] as Parameters<typeof emit>);
} as typeof emit;

// The handler's end() of the response (the bytes then go to TLS and the socket).
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (
  this: http.ServerResponse,
  ...a: unknown[]
): http.ServerResponse {
  mark('response end()');
  return end.apply(this, a as Parameters<typeof end>);
} as typeof end;

// ---- the server ----------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'create-calls-'));
const etcd = await startEtcd();
const flags = parseFlags([
  '--secure-port',
  '0',
  '--data-dir',
  dir,
  '--storage-backend',
  'etcd3',
  '--etcd-servers',
  etcd.endpoint,
]);
const options = new ServerOptions(flags.values, flags.problems);
const problems = options.validate();
if (problems.length > 0) throw new Error(problems.join('; '));
const config = await buildServerConfig(options);
const api = config.api as { authenticator: Authenticator; authorizer: Authorizer };
observe(api.authenticator, 'authenticate', 'authentication', false);
observe(api.authorizer, 'authorize', 'authorization', false);
const running = await startServer(config);
const adminToken =
  (
    parseYaml(readFileSync(join(dir, ADMIN_KUBECONFIG_FILE), 'utf8')) as {
      users: { user: { token: string } }[];
    }
  ).users[0]?.user.token ?? '';
// The serving certificate is self-signed for the loopback bench (as load.ts's clients accept it).
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });

async function post(token: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const bytes = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    mark('client sent');
    const req = https.request(
      `${running.url}${API_PATH}/${path}`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': bytes.length,
          accept: 'application/json',
        },
      },
      (res) => {
        mark('client got headers');
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          mark('client got body');
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

async function mustPost(token: string, path: string, body: unknown): Promise<void> {
  const r = await post(token, path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text.slice(0, 300)}`);
}

// A plain user with a key of their own (as suite.ts's plainUser), for the key they create.
const readerKey = 'r'.repeat(40) + 'benchreaderkey0000000000';
await mustPost(adminToken, 'users', userBody('reader'));
await mustPost(adminToken, 'ownedaccesskeys', accessKeyBody('reader-key', 'reader', readerKey));
for (let i = 0; ; i++) {
  const r = await post(readerKey, 'ownedaccesskeys', accessKeyBody(`reader-probe-${i}`, 'reader'));
  if (r.status === 201) break;
  if (i > 100) throw new Error(`the plain user's key never worked: ${r.status} ${r.text.slice(0, 200)}`);
  await new Promise((r) => setTimeout(r, 50));
}

function teamBody(name: string, users: string[]): unknown {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name },
    spec: { displayName: `Team ${name}`, ...(users.length > 0 ? { users } : {}) },
  };
}

interface Kind {
  readonly label: string;
  readonly token: string;
  readonly path: string;
  readonly body: (name: string) => unknown;
}
const kinds: Kind[] = [
  { label: 'User (admin)', token: adminToken, path: 'users', body: (n) => userBody(n) },
  { label: 'Team (admin)', token: adminToken, path: 'teams', body: (n) => teamBody(n, []) },
  // A member's User gets the team in its status: the identity controller's write, after the response.
  {
    label: 'Team with a member (admin)',
    token: adminToken,
    path: 'teams',
    body: (n) => teamBody(n, ['reader']),
  },
  {
    label: 'SharedSecret (admin)',
    token: adminToken,
    path: `namespaces/${SECRETS_NAMESPACE}/sharedsecrets`,
    body: (n) => sharedSecretBody(n),
  },
  {
    label: "User's key (admin)",
    token: adminToken,
    path: 'ownedaccesskeys',
    body: (n) => accessKeyBody(n, 'reader'),
  },
  {
    label: 'own key (plain user)',
    token: readerKey,
    path: 'ownedaccesskeys',
    body: (n) => accessKeyBody(n, 'reader'),
  },
];

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface KindResult {
  readonly kind: string;
  readonly creates: number;
  readonly perCreate: Record<string, number>;
  /** Median µs after 'request received' of each step's n-th occurrence, in the order seen. */
  readonly timeline: Array<{ step: string; us: number }>;
  readonly p50Ms: number;
}

async function measureKind(kind: Kind, n: number): Promise<KindResult> {
  // Warm-up: JIT, the kind's cache, the connection.
  for (let i = 0; i < 50; i++)
    await mustPost(kind.token, kind.path, kind.body(`warm-${kind.path.length}-${i}-${kinds.indexOf(kind)}`));
  counts.clear();
  const offsets = new Map<string, number[]>();
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    trace = [];
    const started = performance.now();
    await mustPost(kind.token, kind.path, kind.body(`c-${kinds.indexOf(kind)}-${i}`));
    latencies.push(performance.now() - started);
    const events = trace;
    trace = undefined;
    // Let what the create set off after its response (the watch event, its cache apply) settle.
    await new Promise((r) => setImmediate(r));
    const t0 = events.find((e) => e.label === 'request received')?.t ?? events[0]?.t ?? 0;
    const seen = new Map<string, number>();
    for (const e of events) {
      const k = (seen.get(e.label) ?? 0) + 1;
      seen.set(e.label, k);
      const step = k > 1 ? `${e.label} #${k}` : e.label;
      const list = offsets.get(step) ?? [];
      list.push(e.t - t0);
      offsets.set(step, list);
    }
  }
  const timeline = [...offsets.entries()]
    .filter(([, xs]) => xs.length >= n / 2)
    .map(([step, xs]) => ({ step, us: median(xs) }))
    .sort((a, b) => a.us - b.us);
  const perCreate = Object.fromEntries([...counts.entries()].sort().map(([k, v]) => [k, v / n]));
  return { kind: kind.label, creates: n, perCreate, timeline, p50Ms: median(latencies) };
}

const results: KindResult[] = [];
try {
  for (const kind of kinds) results.push(await measureKind(kind, Number(args.creates)));
} finally {
  await running.stop();
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
}

const out = (s: string): boolean => process.stderr.write(s + '\n');
for (const r of results) {
  out(`\n${r.kind}: ${r.creates} serial creates over HTTPS, p50 ${r.p50Ms.toFixed(2)} ms`);
  out(
    '  calls per create: ' +
      Object.entries(r.perCreate)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', '),
  );
  out('  timeline (median µs after the request reached the server):');
  for (const s of r.timeline) out(`    ${s.us.toFixed(0).padStart(7)}  ${s.step}`);
}
if (args.out) writeFileSync(args.out, JSON.stringify(results, null, 2));
process.exit(0);
