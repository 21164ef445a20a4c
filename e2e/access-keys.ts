// Access keys for e2e tests, made the way an administrator makes them: POST
// ownedaccesskeys with the admin's key, keeping the plain key the response returns once.

import assert from 'node:assert/strict';
import { GROUP, GROUP_VERSION, type TestServer } from './harness.js';

/** Creates the key `name` as the admin and returns its plain value. */
export async function createAccessKey(
  server: TestServer,
  name: string,
  spec: Record<string, unknown>,
): Promise<string> {
  const r = await server.api('POST', `/apis/${GROUP}/v1/ownedaccesskeys`, {
    apiVersion: GROUP_VERSION,
    kind: 'OwnedAccessKey',
    metadata: { name },
    spec,
  });
  assert.equal(r.status, 201, r.text);
  const key = r.json<{ spec: { key: string } }>().spec.key;
  assert.match(key, /^[a-z]{64}$/);
  return key;
}
