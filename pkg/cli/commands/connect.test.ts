import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import { PlatformApi } from '../api-client.js';
import { CliError, PlatformApiError } from '../errors.js';
import { contextName, findInstance } from './connect.js';

/** The platform as findInstance reads it: instances by namespace, nothing else. */
class FakeApi extends PlatformApi {
  readonly paths: string[] = [];

  constructor(private readonly instances: ReadonlyArray<readonly [string, string]>) {
    super({ baseUrl: 'https://platform.test', token: 't' }, 'management.platform.dev');
  }

  private object(namespace: string, name: string): KubeObject {
    return {
      apiVersion: 'management.platform.dev/v1',
      kind: 'VirtualClusterInstance',
      metadata: { name, namespace },
    };
  }

  override call<T>(method: string, path: string): Promise<T> {
    this.paths.push(`${method} ${path}`);
    const one = /^\/namespaces\/([^/]+)\/virtualclusterinstances\/([^/]+)$/.exec(path);
    if (one) {
      const found = this.instances.find(([ns, n]) => ns === one[1] && n === one[2]);
      if (!found) return Promise.reject(new PlatformApiError('not found', 404, 'NotFound'));
      return Promise.resolve(this.object(found[0], found[1]) as T);
    }
    const inNamespace = /^\/namespaces\/([^/]+)\/virtualclusterinstances$/.exec(path)?.[1];
    const items = this.instances
      .filter(([ns]) => inNamespace === undefined || ns === inNamespace)
      .map(([ns, n]) => this.object(ns, n));
    return Promise.resolve({ items } as T);
  }
}

const INSTANCES = [
  ['p-demo', 'dev'],
  ['p-demo', 'api'],
  ['p-other', 'dev'],
  ['proj-shop', 'web'],
] as const;

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    return err.message;
  }
  assert.fail('expected a failure');
}

describe('findInstance', () => {
  it("reads the instance in the project's namespace, built from the server's prefix", async () => {
    const api = new FakeApi(INSTANCES);
    const found = await findInstance(api, 'dev', 'demo', 'p-');
    assert.equal(found.namespace, 'p-demo');
    assert.equal(found.project, 'demo');
    assert.deepEqual(api.paths, ['GET /namespaces/p-demo/virtualclusterinstances/dev']);
    const shop = await findInstance(new FakeApi(INSTANCES), 'web', 'shop', 'proj-');
    assert.equal(shop.namespace, 'proj-shop');
  });

  it('tells a missing project from a missing instance, naming what the project has', async () => {
    assert.equal(
      await failure(findInstance(new FakeApi(INSTANCES), 'dev', 'nope', 'p-')),
      'project "nope" not found: it has no virtual clusters you can see (namespace p-nope)',
    );
    assert.equal(
      await failure(findInstance(new FakeApi(INSTANCES), 'db', 'demo', 'p-')),
      'virtual cluster "db" not found in project "demo"; it has: api, dev',
    );
  });

  it('without a project: the only instance of that name, else which projects share it', async () => {
    const api = new FakeApi(INSTANCES);
    const found = await findInstance(api, 'api', undefined, 'p-');
    assert.deepEqual([found.namespace, found.project], ['p-demo', 'demo']);
    assert.deepEqual(api.paths, ['GET /virtualclusterinstances']);
    assert.equal(
      await failure(findInstance(new FakeApi(INSTANCES), 'dev', undefined, 'p-')),
      'several virtual clusters are named "dev" (in projects demo, other): choose one with --project',
    );
    assert.equal(
      await failure(findInstance(new FakeApi(INSTANCES), 'db', undefined, 'p-')),
      'virtual cluster "db" not found in any project you can see',
    );
  });

  it('names the kube config context after the instance and its project', () => {
    assert.equal(contextName('demo', 'dev'), 'platform_dev_demo');
  });
});
