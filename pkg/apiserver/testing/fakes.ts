// Test doubles for the HTTP layer's tests: an in-memory RESTStorage with a
// controllable Watcher, a token authenticator, a scriptable authorizer, a recording
// logger, small document builders, and a helper that serves a handler on 127.0.0.1.

import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOG_LEVELS } from '../../util/log/logger.js';

import { newAlreadyExists, newNotFound } from '../../apis/meta/errors.js';
import type { KubeList, KubeObject, Status, Table } from '../../apis/meta/types.js';
import type { Authenticator } from '../../authentication/interfaces.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import type { Attributes, AuthorizationResult, Authorizer } from '../../authorization/interfaces.js';
import type {
  CreateOptions,
  DeleteRequestOptions,
  DeleteResult,
  GetOptions,
  IncludeObject,
  ListOptions,
  PatchOptions,
  PatchType,
  RESTStorage,
  RequestContext,
  ResourceInfo,
  SubresourceStorage,
  UpdateOptions,
} from '../../registry/rest/interfaces.js';
import type { StorageWatchEvent, WatchReceiver, Watcher } from '../../storage/interfaces.js';
import { newApiHandler, type ApiHandler } from '../api-handler.js';
import type { ApiServerConfig, HealthCheck } from '../config.js';
import type { Logger } from '../../util/log/index.js';
import type { DocumentBuilders } from '../documents.js';

export const GROUP = 'management.test.dev';
export const VERSION = 'v1';

/**
 * A watcher whose events the test pushes; records when it was stopped. Iterated, or
 * with `pushing` it offers push delivery (Watcher.receive) as the watch cache does:
 * events go to the receiver at once, and queue here while it holds.
 */
export class FakeWatcher implements Watcher {
  private readonly queue: StorageWatchEvent[] = [];
  private waiting: ((r: IteratorResult<StorageWatchEvent>) => void) | undefined;
  private ended = false;
  stopped = false;
  private resolveStopped!: () => void;
  /** Resolves when stop() is called: tests await it instead of sleeping. */
  readonly whenStopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));
  receive?: (receiver: WatchReceiver) => () => void;
  private receiver: WatchReceiver | undefined;
  private held = false;
  private toldEnd = false;

  constructor(pushing = false) {
    if (!pushing) return;
    this.receive = (receiver) => {
      this.receiver = receiver;
      this.deliver();
      return () => {
        this.held = false;
        this.deliver();
      };
    };
  }

  private deliver(): void {
    const receiver = this.receiver;
    if (!receiver) return;
    while (!this.held && this.queue.length > 0) {
      if (!receiver.event(this.queue.shift() as StorageWatchEvent)) this.held = true;
    }
    if (this.ended && this.queue.length === 0 && !this.toldEnd) {
      this.toldEnd = true;
      receiver.end();
    }
  }

  /** Events pushed but not yet taken by the consumer. */
  get pending(): number {
    return this.queue.length;
  }

  push(event: StorageWatchEvent): void {
    if (this.ended) return;
    if (this.receive) {
      this.queue.push(event);
      this.deliver();
    } else if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w({ value: event, done: false });
    } else {
      this.queue.push(event);
    }
  }

  stop(): void {
    if (!this.stopped) {
      this.stopped = true;
      this.resolveStopped();
    }
    this.finish();
  }

  /** The registry side ends the watch (as when it has nothing more to say). */
  finish(): void {
    this.ended = true;
    this.deliver();
    if (this.waiting && this.queue.length === 0) {
      const w = this.waiting;
      this.waiting = undefined;
      w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    return {
      next: () => {
        const event = this.queue.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
    };
  }
}

export interface RecordedCall {
  readonly verb: string;
  readonly ctx: RequestContext;
  readonly name?: string;
  readonly body?: unknown;
  readonly options?: unknown;
  readonly listOptions?: ListOptions;
  readonly patchType?: PatchType;
}

export function resourceInfo(resource: string, kind: string, namespaced: boolean): ResourceInfo {
  return {
    group: GROUP,
    version: VERSION,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [],
  };
}

/** An in-memory RESTStorage for one kind: enough behaviour to tell the handlers' wiring apart. */
export class FakeStorage implements RESTStorage {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: RecordedCall[] = [];
  readonly watchers: FakeWatcher[] = [];
  /** Warnings every call adds to the request (to test Warning headers). */
  warnings: string[] = [];
  /** The next delete leaves the object in place (as finalizers would). */
  keepOnDelete = false;
  /** Watchers offer push delivery (Watcher.receive), as the watch cache's do. */
  pushWatchers = false;
  private rv = 10;
  private watcherWaiters: ((w: FakeWatcher) => void)[] = [];
  subresources?: ReadonlyMap<string, SubresourceStorage>;

  constructor(readonly info: ResourceInfo) {}

  private key(ns: string, name: string): string {
    return this.info.namespaced ? `${ns}/${name}` : name;
  }

  private record(call: RecordedCall): void {
    this.calls.push(call);
    call.ctx.warnings.push(...this.warnings);
  }

  lastCall(): RecordedCall {
    const c = this.calls[this.calls.length - 1];
    if (!c) throw new Error('no call recorded');
    return c;
  }

  put(obj: KubeObject): KubeObject {
    const stored: KubeObject = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: this.info.kind,
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(++this.rv) },
    };
    this.objects.set(this.key(stored.metadata.namespace ?? '', stored.metadata.name ?? ''), stored);
    return stored;
  }

  /** Resolves with the next watcher the handler opens (or the current one). */
  nextWatcher(): Promise<FakeWatcher> {
    return new Promise((resolve) => this.watcherWaiters.push(resolve));
  }

  private gr() {
    return { group: GROUP, resource: this.info.resource };
  }

  async get(ctx: RequestContext, name: string, options: GetOptions): Promise<KubeObject> {
    this.record({ verb: 'get', ctx, name, options });
    const obj = this.objects.get(this.key(ctx.namespace, name));
    if (!obj) throw newNotFound(this.gr(), name);
    return obj;
  }

  async list(ctx: RequestContext, options: ListOptions): Promise<KubeList> {
    this.record({ verb: 'list', ctx, options, listOptions: options });
    const items = [...this.objects.values()].filter(
      (o) => !this.info.namespaced || ctx.namespace === '' || o.metadata.namespace === ctx.namespace,
    );
    return {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: this.info.listKind,
      metadata: { resourceVersion: String(this.rv), ...(options.limit ? { continue: 'next-page' } : {}) },
      items,
    };
  }

  async create(ctx: RequestContext, body: unknown, options: CreateOptions): Promise<KubeObject> {
    this.record({ verb: 'create', ctx, body, options });
    const obj = body as KubeObject;
    const name = obj.metadata?.name ?? 'generated';
    if (this.objects.has(this.key(ctx.namespace, name))) throw newAlreadyExists(this.gr(), name);
    const meta = { ...obj.metadata, name, ...(this.info.namespaced ? { namespace: ctx.namespace } : {}) };
    if (options.dryRun) return { ...obj, metadata: meta };
    return this.put({ ...obj, metadata: meta });
  }

  async update(
    ctx: RequestContext,
    name: string,
    body: unknown,
    options: UpdateOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.record({ verb: 'update', ctx, name, body, options });
    const exists = this.objects.has(this.key(ctx.namespace, name));
    const obj = body as KubeObject;
    return { object: this.put({ ...obj, metadata: { ...obj.metadata, name } }), created: !exists };
  }

  async patch(
    ctx: RequestContext,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    this.record({ verb: 'patch', ctx, name, body: patch, options, patchType });
    const current = this.objects.get(this.key(ctx.namespace, name));
    if (!current) throw newNotFound(this.gr(), name);
    return { object: this.put({ ...current, patched: patchType }), created: false };
  }

  async delete(ctx: RequestContext, name: string, options: DeleteRequestOptions): Promise<DeleteResult> {
    this.record({ verb: 'delete', ctx, name, options });
    const key = this.key(ctx.namespace, name);
    const current = this.objects.get(key);
    if (!current) throw newNotFound(this.gr(), name);
    if (this.keepOnDelete) {
      return {
        object: { ...current, metadata: { ...current.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        deleted: false,
      };
    }
    if (!options.dryRunAll) this.objects.delete(key);
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name,
        group: GROUP,
        kind: this.info.resource,
        ...(current.metadata.uid ? { uid: current.metadata.uid } : {}),
      },
      code: 200,
    };
    return { object: status, deleted: true };
  }

  async deleteCollection(
    ctx: RequestContext,
    options: DeleteRequestOptions,
    listOptions: ListOptions,
  ): Promise<KubeList> {
    this.record({ verb: 'deletecollection', ctx, options, listOptions });
    const items = [...this.objects.values()];
    this.objects.clear();
    return {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: this.info.listKind,
      metadata: { resourceVersion: String(this.rv) },
      items,
    };
  }

  async watch(ctx: RequestContext, options: ListOptions): Promise<Watcher> {
    this.record({ verb: 'watch', ctx, options, listOptions: options });
    const w = new FakeWatcher(this.pushWatchers);
    this.watchers.push(w);
    const waiters = this.watcherWaiters;
    this.watcherWaiters = [];
    for (const resolve of waiters) resolve(w);
    return w;
  }

  convertToTable(_ctx: RequestContext, obj: KubeObject | KubeList, includeObject: IncludeObject): Table {
    const items =
      'items' in obj && Array.isArray(obj.items) ? (obj.items as KubeObject[]) : [obj as KubeObject];
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: obj.metadata.resourceVersion ?? '' },
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name', description: 'Name of the object', priority: 0 },
        { name: 'Color', type: 'string', format: '', description: 'Its color', priority: 0 },
      ],
      rows: items.map((item) => ({
        cells: [item.metadata.name, (item.spec as { color?: string } | undefined)?.color ?? ''],
        ...(includeObject === 'None'
          ? {}
          : includeObject === 'Object'
            ? { object: item }
            : {
                object: {
                  kind: 'PartialObjectMetadata',
                  apiVersion: 'meta.k8s.io/v1',
                  metadata: item.metadata,
                },
              }),
      })),
    };
  }
}

/** Bearer tokens → users; anything else is anonymous (null). */
export class FakeAuthenticator implements Authenticator {
  constructor(private readonly tokens: Record<string, AuthenticatedUser>) {}

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    const header = req.headers.authorization;
    if (!header?.startsWith('Bearer ')) return null;
    return this.tokens[header.slice(7)] ?? null;
  }
}

/** Allows everything unless `decide` says otherwise; records every question. */
export class FakeAuthorizer implements Authorizer {
  readonly asked: Attributes[] = [];
  decide: (attrs: Attributes) => AuthorizationResult = () => ({ decision: 'allow' });

  async authorize(attrs: Attributes): Promise<AuthorizationResult> {
    this.asked.push(attrs);
    return this.decide(attrs);
  }
}

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}

export class RecordingLogger implements Logger {
  constructor(
    readonly lines: LogLine[] = [],
    private readonly base: Readonly<Record<string, unknown>> = {},
  ) {}
  /** Records into the same lines, with `fields` added to each. */
  child(fields: Record<string, unknown>): RecordingLogger {
    return new RecordingLogger(this.lines, { ...this.base, ...fields });
  }
  debug(msg: string, fields: Record<string, unknown> = {}): void {
    this.record('debug', msg, fields);
  }
  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.record('info', msg, fields);
  }
  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.record('warn', msg, fields);
  }
  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.record('error', msg, fields);
  }
  /** The least severe level recorded, as `--log-level` sets it (every level by default). */
  minLevel: LogLine['level'] = 'debug';
  enabled(level: LogLine['level']): boolean {
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(this.minLevel);
  }
  private record(level: LogLine['level'], msg: string, fields: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    this.lines.push({
      level,
      msg,
      fields: Object.keys(this.base).length === 0 ? fields : { ...this.base, ...fields },
    });
  }
}

/** Small stand-ins for the discovery and OpenAPI builders: the HTTP side is what is tested. */
export const fakeDocumentBuilders: DocumentBuilders = {
  apiVersions: () => ({ kind: 'APIVersions', versions: [], serverAddressByClientCIDRs: [] }),
  apiGroupList: (group, version) => ({
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [{ name: group, versions: [{ groupVersion: `${group}/${version}`, version }] }],
  }),
  apiGroup: (group, version) => ({
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions: [{ groupVersion: `${group}/${version}`, version }],
  }),
  apiResourceList: (group, version, resources) => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: `${group}/${version}`,
    resources: resources.map((r) => ({ name: r.info.resource, kind: r.info.kind })),
  }),
  aggregatedDiscovery: (group) => ({
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [{ metadata: { name: group } }],
  }),
  etagOf: (json) => `"${Buffer.from(json).toString('base64url').slice(0, 16)}"`,
  openAPIDocuments: () => ({
    v2: { swagger: '2.0', paths: {} },
    v2GroupOnly: { swagger: '2.0', paths: {} },
    v3: { openapi: '3.0.0', paths: {} },
    builtinV3: new Map(),
  }),
  openAPIV3Root: (entries) => ({
    paths: Object.fromEntries(
      entries.map(({ groupVersion, hash }) => [
        `apis/${groupVersion}`,
        { serverRelativeURL: `/openapi/v3/apis/${groupVersion}?hash=${hash}` },
      ]),
    ),
  }),
};

/** A version document with nothing but the numbers, for servers built in tests. */
export const TEST_VERSION_INFO: ApiServerConfig['versionInfo'] = {
  major: '1',
  minor: '0',
  gitVersion: 'v1.0.0',
  gitCommit: '',
  gitTreeState: '',
  buildDate: '',
  goVersion: '',
  compiler: '',
  platform: '',
};

/** A Status as clients parse it from an error response. */
export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  message: string;
  reason?: string;
  code: number;
  details?: Record<string, unknown>;
}

export const ADMIN: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'] };
export const BOB: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'] };
/** A host cluster administrator (`root-token`): exempt from the in-flight limits, as upstream. */
export const ROOT: AuthenticatedUser = { name: 'root', groups: ['system:masters', 'system:authenticated'] };

export interface TestServer {
  readonly url: string;
  readonly handler: ApiHandler;
  readonly server: Server;
  readonly teams: FakeStorage;
  readonly secrets: FakeStorage;
  readonly authorizer: FakeAuthorizer;
  readonly logger: RecordingLogger;
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly maxRequestBodyBytes?: number;
  readonly minRequestTimeoutSeconds?: number;
  readonly readyChecks?: readonly HealthCheck[];
  readonly liveChecks?: readonly HealthCheck[];
  readonly requestTimeoutMs?: number;
  readonly maxRequestsInflight?: number;
  readonly maxMutatingRequestsInflight?: number;
  /** false: no request metrics (to measure what they cost). */
  readonly metrics?: boolean;
  /** Builds the handler (default: the real handler over the fake document builders). */
  readonly createHandler?: (config: ApiServerConfig) => ApiHandler;
  /** Adjusts the fake storages before the handler is built (e.g. drop a verb). */
  readonly prepare?: (teams: FakeStorage, secrets: FakeStorage) => void;
}

/** Serves a handler over fake teams (cluster-scoped) and sharedsecrets (namespaced) on 127.0.0.1. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const teams = new FakeStorage(resourceInfo('teams', 'Team', false));
  const secrets = new FakeStorage(resourceInfo('sharedsecrets', 'SharedSecret', true));
  options.prepare?.(teams, secrets);
  const authorizer = new FakeAuthorizer();
  const logger = new RecordingLogger();
  const config: ApiServerConfig = {
    group: GROUP,
    version: VERSION,
    resources: [teams, secrets],
    authenticator: new FakeAuthenticator({ 'admin-token': ADMIN, 'bob-token': BOB, 'root-token': ROOT }),
    authorizer,
    pathPrefixes: ['/kubernetes/management'],
    versionInfo: {
      major: '1',
      minor: '0',
      gitVersion: 'v1.0.0',
      gitCommit: 'abc',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
      goVersion: 'node20',
      compiler: 'tsc',
      platform: 'linux/amd64',
    },
    logger,
    ...(options.maxRequestBodyBytes === undefined
      ? {}
      : { maxRequestBodyBytes: options.maxRequestBodyBytes }),
    ...(options.minRequestTimeoutSeconds === undefined
      ? {}
      : { minRequestTimeoutSeconds: options.minRequestTimeoutSeconds }),
    ...(options.readyChecks ? { readyChecks: options.readyChecks } : {}),
    ...(options.liveChecks ? { liveChecks: options.liveChecks } : {}),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.maxRequestsInflight === undefined
      ? {}
      : { maxRequestsInflight: options.maxRequestsInflight }),
    ...(options.maxMutatingRequestsInflight === undefined
      ? {}
      : { maxMutatingRequestsInflight: options.maxMutatingRequestsInflight }),
  };
  const handler = options.createHandler
    ? options.createHandler(config)
    : newApiHandler(config, fakeDocumentBuilders);
  const server = createServer((req, res) => handler.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    handler,
    server,
    teams,
    secrets,
    authorizer,
    logger,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Sends `Authorization: Bearer admin-token` unless set to null or another token. */
  readonly token?: string | null;
}

/** One HTTP request with a fresh connection; resolves with the whole response. */
export function call(base: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? 'admin-token' : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
      res.on('error', reject);
    });
    // The server may answer (413) and close before it has read everything we send.
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Reads a watch stream line by line. */
export interface WatchStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The next complete line, or null when the stream ended. */
  nextLine(): Promise<string | null>;
  /** Everything until the server ends the stream. */
  rest(): Promise<string[]>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  abort(): void;
}

export function openWatch(base: string, path: string, options: RequestOptions = {}): Promise<WatchStream> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? 'admin-token' : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers, agent: false }, (res) => {
      let buffer = '';
      const lines: string[] = [];
      let done = false;
      let waiter: (() => void) | undefined;
      const wake = (): void => {
        const w = waiter;
        waiter = undefined;
        w?.();
      };
      let resolveEnded!: () => void;
      const ended = new Promise<void>((r) => (resolveEnded = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          lines.push(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
        }
        wake();
      });
      const finish = (): void => {
        done = true;
        resolveEnded();
        wake();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const nextLine = async (): Promise<string | null> => {
        while (lines.length === 0 && !done) await new Promise<void>((r) => (waiter = r));
        return lines.shift() ?? null;
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        nextLine,
        rest: async () => {
          await ended;
          const out = [...lines];
          lines.length = 0;
          return out;
        },
        ended,
        abort: () => req.destroy(),
      });
    });
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}
