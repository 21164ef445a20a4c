import assert from 'node:assert/strict';
import { test } from 'node:test';

import { managementKinds } from '../../registry/management/kinds.js';
import { openAPIDocuments } from './index.js';

const GROUP = 'management.platform.dev';

type Paths = Record<string, Record<string, { operationId?: string } | unknown[]>>;

function operations(paths: Paths): string[] {
  const ids: string[] = [];
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item))
      if (!Array.isArray(op)) ids.push(`${method} ${path} ${op.operationId ?? ''}`);
  return ids.sort();
}

// Both documents come from one walk of the routes: they must describe the same
// operations, under the same paths and operation ids.
test('v2 and v3 describe the same operations', () => {
  const resources = managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
  const { v2, v3 } = openAPIDocuments(GROUP, 'v1', resources);
  const v2Ops = operations(v2.paths as Paths);
  assert.ok(v2Ops.length > 20, `expected every kind's operations, got ${v2Ops.length}`);
  assert.deepEqual(operations(v3.paths as Paths), v2Ops);
});
