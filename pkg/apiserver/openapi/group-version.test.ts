import assert from 'node:assert/strict';
import { test } from 'node:test';

import { managementKinds } from '../../apis/management/v1/index.js';
import { defaultDocumentBuilders } from '../document-builders.js';
import { openAPIV2, openAPIV3GroupVersion } from './index.js';

const GROUP = 'management.platform.dev';

// The server serves what openAPIDocuments builds; the rest of the OpenAPI tests check
// openAPIV2 and openAPIV3GroupVersion. One walk of the routes must give the same documents.
test('the documents the server serves are the ones the builders make, for v2 and v3', () => {
  const resources = managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
  const served = defaultDocumentBuilders.openAPIDocuments(GROUP, 'v1', resources);
  assert.deepEqual(served.v2, openAPIV2(GROUP, 'v1', resources));
  assert.deepEqual(served.v3, openAPIV3GroupVersion(GROUP, 'v1', resources));
  assert.ok(Object.keys((served.v3 as { paths: object }).paths).length > 0);
});
