// The self-subject reviews as real kubectl sees them through OpenAPI (`kubectl
// explain`, v3 for a current kubectl, v2 protobuf for Debian's 1.20: run this file
// with KUBECTL=<path> to try another), `auth can-i`/`whoami` still answered, and
// apiserver_request_terminations_total moving on /metrics when the server refuses a
// request (its overload limiter, 429) and cuts one off (its deadline, 504).

import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';

import { createAccessKey } from './access-keys.js';
import { eventually } from './eventually.js';
import { GROUP, GROUP_VERSION, kubectlMinorVersion, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { apiRequest } from './https-client.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;

/** A sample's value in the Prometheus text, summed over series whose labels include `labels`; 0 when none. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const have = Object.fromEntries([...line.matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describe('the self-subject reviews in OpenAPI, and the terminations counter', () => {
  let s: TestServer;
  let minor = 0;

  before(async () => {
    minor = await kubectlMinorVersion();
    s = await startServer({
      backend: 'sqlite',
      // One read and one write at a time, so a burst from one user is refused.
      args: ['--max-requests-inflight=1', '--max-mutating-requests-inflight=1'],
    });
  });
  after(async () => {
    await s?.stop();
  });

  it('lists the reviews in discovery and their group versions in /openapi/v3', TEST, async () => {
    const authz = (await s.api('GET', '/apis/authorization.k8s.io/v1')).json<{ resources: { name: string }[] }>();
    assert.deepEqual(authz.resources.map((r) => r.name).sort(), ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']);
    const root = (await s.api('GET', '/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>();
    for (const gv of [`apis/${GROUP}/v1`, 'apis/authorization.k8s.io/v1', 'apis/authentication.k8s.io/v1']) {
      const url = root.paths[gv]?.serverRelativeURL ?? '';
      assert.match(url, new RegExp(`^/openapi/v3/${gv.replace(/\./g, '\\.')}\\?hash=[0-9A-F]+$`));
      // The document at the pinned URL is immutable; a stale hash is redirected to it.
      const doc = await s.api('GET', url);
      assert.equal(doc.status, 200, doc.text);
      assert.match(String(doc.headers['cache-control']), /immutable/);
      const stale = await s.api('GET', `/openapi/v3/${gv}?hash=0`);
      assert.equal(stale.status, 301);
    }
  });

  it('explains selfsubjectaccessreviews down to the resource attributes', TEST, async () => {
    const r = await s.kubectl(['explain', 'selfsubjectaccessreviews.spec.resourceAttributes']);
    assert.equal(r.code, 0, `kubectl 1.${minor} explain failed: ${r.stderr}`);
    assert.match(r.stdout, /KIND:\s+SelfSubjectAccessReview/);
    assert.match(r.stdout, /VERSION:\s+(authorization\.k8s\.io\/)?v1/);
    for (const field of ['namespace', 'verb', 'resource', 'subresource', 'name', 'group', 'version']) {
      assert.match(r.stdout, new RegExp(`^\\s+${field}\\s+<string>`, 'm'), `${field} missing:\n${r.stdout}`);
    }
  });

  it('explains the rules review and the whoami review', TEST, async () => {
    const rules = await s.kubectl(['explain', 'selfsubjectrulesreviews.status.resourceRules']);
    assert.equal(rules.code, 0, rules.stderr);
    assert.match(rules.stdout, /KIND:\s+SelfSubjectRulesReview/);
    assert.match(rules.stdout, /verbs\s+<\[\]string>\s+-required-/);
    const who = await s.kubectl(['explain', 'selfsubjectreviews.status.userInfo']);
    assert.equal(who.code, 0, who.stderr);
    assert.match(who.stdout, /KIND:\s+SelfSubjectReview/);
    assert.match(who.stdout, /username\s+<string>/);
  });

  it('still answers kubectl auth can-i (and whoami where kubectl has it)', TEST, async () => {
    const canI = await s.kubectl(['auth', 'can-i', 'create', 'teams']);
    assert.equal(canI.stdout.trim(), 'yes', canI.stderr);
    if (minor >= 27) {
      const who = await s.kubectl(['auth', 'whoami', '-o', 'json']);
      assert.equal(who.code, 0, who.stderr);
      assert.equal(JSON.parse(who.stdout).kind, 'SelfSubjectReview');
    }
  });

  async function terminations(labels: Record<string, string>): Promise<number> {
    const r = await s.api('GET', '/metrics');
    assert.equal(r.status, 200);
    return sample(r.text, 'apiserver_request_terminations_total', { component: 'apiserver', ...labels });
  }

  it('counts a request cut off by its deadline (504)', TEST, async () => {
    const labels = { verb: 'POST', group: GROUP, version: 'v1', resource: 'teams', scope: 'resource', code: '504' };
    const before = await terminations(labels);
    // Half a body, then nothing: the deadline (?timeout=1s) passes while the server waits for the rest.
    const url = new URL(`${s.apiBase}${V1}/teams?timeout=1s`);
    const body = JSON.stringify({ apiVersion: GROUP_VERSION, kind: 'Team', metadata: { name: 'slow' }, spec: {} });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        ca: s.ca,
        agent: false,
        headers: {
          Authorization: `Bearer ${s.token}`,
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', (e) => reject(e));
      req.write(body.slice(0, 10));
    });
    assert.equal(status, 504);
    assert.equal(await terminations(labels), before + 1);
    assert.equal((await s.api('GET', `${V1}/teams/slow`)).status, 404, 'the cut-off create stored nothing');
  });

  it('counts requests the overload limiter refused (429), as many as were refused', TEST, async () => {
    const user = await s.api('POST', `${V1}/users`, {
      apiVersion: GROUP_VERSION,
      kind: 'User',
      metadata: { name: 'burst' },
      spec: {},
    });
    assert.equal(user.status, 201, user.text);
    // Administrators are exempt from the limit: a user of their own.
    const key = await createAccessKey(s, 'burst-key', { user: 'burst' });
    const target = { baseUrl: s.apiBase, ca: s.ca, token: key };
    await eventually(async () => assert.notEqual((await apiRequest(target, 'GET', `${V1}/teams/none`)).status, 401));
    const labels = { verb: 'GET', group: GROUP, version: 'v1', resource: 'teams', scope: 'resource', code: '429' };
    const before = await terminations(labels);
    // Bursts of one user's reads against one seat and a queue of 50: some are refused.
    let refused = 0;
    for (let round = 0; round < 10 && refused === 0; round++) {
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => apiRequest(target, 'GET', `${V1}/teams/none`)),
      );
      refused += answers.filter((a) => a.status === 429).length;
      for (const a of answers) assert.ok(a.status === 429 || a.status === 403 || a.status === 404, `${a.status}`);
    }
    assert.ok(refused > 0, 'no read was refused in 10 bursts of 200');
    assert.equal(await terminations(labels), before + refused);
  });
});
