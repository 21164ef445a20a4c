// Reading an object back as the server holds it, the way the e2e tests check what
// a command left behind.

import assert from 'node:assert/strict';
import { GROUP_VERSION } from './harness.js';
import type { TestServer } from './harness.js';

/** The object as the server holds it, or undefined when it does not exist (any other answer fails the test). */
export async function readObject<T>(
  s: TestServer,
  resource: string,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  const v1 = `/apis/${GROUP_VERSION}`;
  const path = namespace ? `${v1}/namespaces/${namespace}/${resource}/${name}` : `${v1}/${resource}/${name}`;
  const r = await s.api('GET', path);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, `GET ${path}: ${r.text}`);
  return r.json<T>();
}
