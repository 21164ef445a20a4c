// Test fixtures for the generic Store: a small test kind (namespaced "Widget" or
// cluster-scoped "Gadget") with a strategy that behaves like the real ones
// (status is server-owned, one kind-specific rule, one table column, a field
// that only the creating response may show), over real storage: KVStorage on an
// in-memory SQLite KV.

import assert from 'node:assert/strict';

import { isApiError } from '../../../apis/meta/errors.js';
import { invalid, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { objectMetaSchema } from '../../../apis/management/v1/object-meta-schema.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import { SqliteKV } from '../../../storage/sqlite/index.js';
import { KVStorage } from '../../../storage/store.js';
import type {
  CreateOptions,
  DeleteRequestOptions,
  PatchOptions,
  RequestContext,
  ResourceInfo,
  StatusStrategy,
  Strategy,
  TableColumn,
} from '../../rest/interfaces.js';
import { Store } from '../store.js';

export const GROUP = 'test.example.dev';
export const API_VERSION = `${GROUP}/v1`;

export function testInfo(namespaced: boolean): ResourceInfo {
  const kind = namespaced ? 'Widget' : 'Gadget';
  const resource = namespaced ? 'widgets' : 'gadgets';
  return {
    group: GROUP,
    version: 'v1',
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

export const TEST_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    // ObjectMeta as every kind embeds it: its list types drive managedFields (finalizers a set).
    metadata: objectMetaSchema(),
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer' },
        color: { type: 'string' },
        secret: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        aliases: {
          type: 'array',
          items: { type: 'string' },
          'x-kubernetes-patch-strategy': 'merge',
        },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        settings: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string' } } },
  },
};

function spec(obj: KubeObject): Record<string, unknown> {
  return isObject(obj.spec) ? obj.spec : {};
}

/** What a kind's strategy does, in small. */
export class TestStrategy implements Strategy {
  readonly schema = TEST_SCHEMA;
  readonly tableColumns: readonly TableColumn[] = [
    {
      definition: { name: 'Size', type: 'integer', format: '', description: 'The size.', priority: 0 },
      cell: (obj) => spec(obj).size ?? null,
    },
  ];
  prepareCalls = 0;
  /** The kind has a status subresource; `statusPrepared` counts its hook's calls. */
  statusPrepared = 0;
  readonly status: StatusStrategy = {
    prepareForUpdate: () => {
      this.statusPrepared++;
    },
    validateUpdate: (_ctx, obj) =>
      isObject(obj.status) && obj.status.phase === 'Bogus'
        ? [invalid('status.phase', 'Bogus', 'is not a phase')]
        : [],
  };

  constructor(readonly info: ResourceInfo) {}

  prepareForCreate(_ctx: RequestContext, obj: KubeObject): void {
    this.prepareCalls++;
    // Status belongs to the server: a client cannot set it through the main resource.
    obj.status = { phase: 'Pending' };
  }

  prepareForUpdate(_ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
    this.prepareCalls++;
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  }

  validate(_ctx: RequestContext, obj: KubeObject): FieldError[] {
    const size = spec(obj).size;
    if (typeof size === 'number' && size < 0)
      return [invalid('spec.size', size, 'must be greater than or equal to 0')];
    return [];
  }

  validateUpdate(ctx: RequestContext, obj: KubeObject): FieldError[] {
    return this.validate(ctx, obj);
  }

  /** spec.secret is shown only to the request that wrote it. */
  decorate(obj: KubeObject, _created: boolean, ctx?: RequestContext): KubeObject {
    if (ctx || !isObject(obj.spec) || obj.spec.secret === undefined) return obj;
    return { ...obj, spec: { ...obj.spec, secret: '' } };
  }
}

export interface Fixture {
  readonly store: Store;
  readonly storage: KVStorage;
  readonly strategy: TestStrategy;
  readonly info: ResourceInfo;
  /** The Store's clock; tests move it. */
  clock: Date;
  ctx(namespace?: string, userAgent?: string): RequestContext;
  close(): Promise<void>;
}

export function newFixture(options: { namespaced?: boolean; randomSuffix?: () => string } = {}): Fixture {
  const info = testInfo(options.namespaced ?? true);
  const strategy = new TestStrategy(info);
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const fixture: Fixture = {
    info,
    strategy,
    storage,
    clock: new Date('2026-07-01T10:00:00.000Z'),
    store: undefined as unknown as Store,
    ctx: (
      namespace = info.namespaced ? 'default' : '',
      userAgent = 'kubectl/v1.31.0 (linux/amd64) kubernetes/abc',
    ) => ({
      user: { name: 'alice', groups: ['system:authenticated'] },
      namespace,
      userAgent,
      warnings: [],
    }),
    close: () => storage.close(),
  };
  (fixture as { store: Store }).store = new Store({
    strategy,
    storage,
    keyPrefix: '/registry',
    compileSchema,
    now: () => fixture.clock,
    ...(options.randomSuffix ? { randomSuffix: options.randomSuffix } : {}),
  });
  return fixture;
}

export const CREATE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };
export const UPDATE = CREATE;
export const PATCH: PatchOptions = CREATE;
export const DELETE: DeleteRequestOptions = { dryRunAll: false };

export function widget(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: API_VERSION, metadata: { name }, spec: { size: 1 }, ...extra };
}

export interface ExpectedError {
  readonly code: number;
  readonly reason?: string;
  readonly message?: string | RegExp;
}

/** Asserts that `promise` rejects with an ApiError of that code (and reason and message). */
export async function rejectsWith(promise: Promise<unknown>, expected: ExpectedError): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isApiError(err), `expected an ApiError, got ${String(err)}`);
    assert.equal(err.code, expected.code, `status code (message: ${err.message})`);
    if (expected.reason !== undefined) assert.equal(err.reason, expected.reason);
    if (typeof expected.message === 'string') assert.equal(err.message, expected.message);
    else if (expected.message) assert.match(err.message, expected.message);
    return true;
  });
}

/** Reads every event a watch delivers until `count` arrived (or the timeout passes). */
export async function collect<T>(iterable: AsyncIterable<T>, count: number, timeoutMs = 2000): Promise<T[]> {
  const out: T[] = [];
  const iterator = iterable[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < count) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), remaining);
    });
    const next = await Promise.race([iterator.next(), timeout]);
    clearTimeout(timer);
    if (next === 'timeout' || next.done) break;
    out.push(next.value);
  }
  return out;
}
