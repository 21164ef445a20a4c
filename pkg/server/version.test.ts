import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { KUBERNETES_API_LEVEL, versionInfo } from './version.js';

const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

test('/version names the Kubernetes API level in major/minor and the platform in the build metadata', () => {
  const info = versionInfo({});
  assert.equal(info.major, KUBERNETES_API_LEVEL.major);
  assert.equal(info.minor, KUBERNETES_API_LEVEL.minor);
  assert.equal(info.gitVersion, `v1.${KUBERNETES_API_LEVEL.minor}.0+platform.${packageVersion}`);
  // A semantic version clients parse (k8s.io/apimachinery/pkg/util/version), agreeing with major/minor.
  const m = /^v(\d+)\.(\d+)\.(\d+)\+([0-9A-Za-z.-]+)$/.exec(info.gitVersion);
  assert.ok(m, info.gitVersion);
  assert.deepEqual([m[1], m[2]], [info.major, info.minor]);
  assert.equal(info.gitCommit, '');
  assert.equal(info.gitTreeState, '');
});

test('a build that sets the commit and date reports them', () => {
  const info = versionInfo({ PLATFORM_GIT_COMMIT: 'abc123', PLATFORM_BUILD_DATE: '2026-01-02T03:04:05Z' });
  assert.equal(info.gitCommit, 'abc123');
  assert.equal(info.gitTreeState, 'clean');
  assert.equal(info.buildDate, '2026-01-02T03:04:05Z');
});
