import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reliableProgressRequests } from './progress-support.js';

test('requested progress notifications are trusted only from etcd versions that order them after events', () => {
  for (const v of ['3.4.31', '3.4.34', '3.5.13', '3.5.21', '3.6.0', 'v3.6.4', '4.0.0']) {
    assert.equal(reliableProgressRequests(v), true, v);
  }
  for (const v of ['3.4.23', '3.4.30', '3.5.0', '3.5.12', '3.3.27', '2.3.8', '', 'unknown']) {
    assert.equal(reliableProgressRequests(v), false, v);
  }
});
