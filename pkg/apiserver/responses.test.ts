import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import type { KubeObject } from '../apis/meta/types.js';
import { noteOutputOf, noteStateList } from '../registry/generic/encoded.js';
import { deepFreeze } from '../storage/cacher/watch-cache.js';
import { JSON_FORMAT, writeObject } from './responses.js';

/** A cached state as the Store leaves it: frozen, apiVersion and kind first. */
function state(name: string): KubeObject {
  return deepFreeze({
    apiVersion: 'g/v1',
    kind: 'User',
    metadata: { name, resourceVersion: '7' },
    // Non-ASCII, so characters and bytes differ.
    spec: { displayName: `Zoë ✓ 🚀 ${name}` },
  } as KubeObject);
}

/** An output copy of a cached state, as a get hands it to the writer. */
function outputOf(source: KubeObject): KubeObject {
  const copy: KubeObject = { ...source };
  noteOutputOf(copy, source);
  return copy;
}

const states = Array.from({ length: 50 }, (_, i) => state(`u-${i}`));
const bodies: Record<string, () => unknown> = {
  '/list': () => ({
    kind: 'UserList',
    apiVersion: 'g/v1',
    metadata: { resourceVersion: '9' },
    items: noteStateList([...states]),
  }),
  '/copies': () => ({
    kind: 'UserList',
    apiVersion: 'g/v1',
    metadata: { resourceVersion: '9', continue: 'é' },
    items: states.map(outputOf),
  }),
  '/object': () => outputOf(states[3] as KubeObject),
};

describe('writing cached objects and lists', () => {
  let origin = '';
  const server = createServer((req, res: ServerResponse) => {
    const body = bodies[req.url ?? '']?.();
    writeObject(res, 200, body, JSON_FORMAT);
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const fetchRaw = (path: string, method = 'GET'): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = request(`${origin}${path}`, { method }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });

  for (const path of Object.keys(bodies)) {
    it(`sends ${path} as exactly JSON.stringify's bytes and a newline, with their Content-Length`, async () => {
      const expected = Buffer.from(`${JSON.stringify(bodies[path]?.())}\n`);
      for (let i = 0; i < 2; i++) {
        // The second time from the memos the first one made.
        const { headers, body } = await fetchRaw(path);
        assert.deepEqual(body, expected);
        assert.equal(headers['content-length'], String(expected.length));
        assert.equal(headers['transfer-encoding'], undefined);
        assert.equal(headers['content-type'], 'application/json');
      }
    });
  }

  it('answers HEAD with the headers of the body and no body', async () => {
    const expected = Buffer.from(`${JSON.stringify(bodies['/list']?.())}\n`);
    const { headers, body } = await fetchRaw('/list', 'HEAD');
    assert.equal(body.length, 0);
    assert.equal(headers['content-length'], String(expected.length));
  });
});
