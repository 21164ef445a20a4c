import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { parse as parseYAML } from 'yaml';

import { newConflict, newTooManyRequests } from '../apis/meta/errors.js';
import { call, GROUP, startTestServer, type StatusBody, type TestServer } from './testing/fakes.js';

const ROOT = `/apis/${GROUP}/v1`;
const PREFIXED = `/kubernetes/management${ROOT}`;

describe('resource handlers over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });
  beforeEach(() => {
    s.teams.objects.clear();
    s.secrets.objects.clear();
    s.teams.calls.length = 0;
    s.secrets.calls.length = 0;
    s.teams.warnings = [];
    s.teams.keepOnDelete = false;
    s.authorizer.decide = () => ({ decision: 'allow' });
    s.authorizer.asked.length = 0;
  });

  it('serves the same resources under the root and under the prefix', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    for (const base of [ROOT, PREFIXED]) {
      const res = await call(s.url, `${base}/teams/red`);
      assert.equal(res.status, 200, base);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.json<{ metadata: { name: string } }>().metadata.name, 'red');
    }
    // Authorization sees the path without the prefix.
    const asked = s.authorizer.asked.map((a) => a.path);
    assert.deepEqual(asked, [`${ROOT}/teams/red`, `${ROOT}/teams/red`]);
  });

  it('creates with 201, reads, lists with items [] when empty', async () => {
    const empty = await call(s.url, `${ROOT}/teams`);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json<{ items: unknown[] }>().items, []);
    assert.equal(empty.json<{ kind: string }>().kind, 'TeamList');

    const created = await call(s.url, `${ROOT}/teams`, {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'blue' }, spec: { color: 'blue' } }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.json<{ metadata: { name: string } }>().metadata.name, 'blue');
    const opts = s.teams.lastCall().options as {
      dryRun: boolean;
      fieldValidation: string;
      fieldManager: string;
    };
    assert.deepEqual(opts, { dryRun: false, fieldManager: '', fieldValidation: 'Warn' });

    const list = await call(s.url, `${ROOT}/teams`);
    assert.equal(list.json<{ items: unknown[] }>().items.length, 1);
  });

  it('passes write options and answers a dry-run create with 201', async () => {
    const res = await call(s.url, `${ROOT}/teams?dryRun=All&fieldManager=me&fieldValidation=Strict`, {
      method: 'POST',
      body: '{"metadata":{"name":"dry"}}',
    });
    assert.equal(res.status, 201);
    assert.deepEqual(s.teams.lastCall().options, {
      dryRun: true,
      fieldManager: 'me',
      fieldValidation: 'Strict',
    });
    assert.equal(s.teams.objects.size, 0);
  });

  it('rejects bad dryRun and fieldValidation values with 422 on the options kind', async () => {
    const dry = await call(s.url, `${ROOT}/teams?dryRun=Yes`, { method: 'POST', body: '{}' });
    assert.equal(dry.status, 422);
    assert.equal(
      dry.json<StatusBody>().message,
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Yes"]: supported values: "All"',
    );
    const fv = await call(s.url, `${ROOT}/teams/x?fieldValidation=Loud`, { method: 'PUT', body: '{}' });
    assert.equal(fv.status, 422);
    assert.equal(
      fv.json<StatusBody>().message,
      'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
    assert.equal(s.teams.calls.length, 0);
  });

  it('passes list options through, all-namespaces lists for namespaced kinds', async () => {
    s.secrets.put({ metadata: { name: 'a', namespace: 'ns1' } });
    s.secrets.put({ metadata: { name: 'b', namespace: 'ns2' } });
    const all = await call(s.url, `${ROOT}/sharedsecrets`);
    assert.equal(all.status, 200);
    assert.equal(all.json<{ items: unknown[] }>().items.length, 2);
    assert.equal(s.secrets.lastCall().ctx.namespace, '');

    const q =
      'labelSelector=a%3Db&fieldSelector=metadata.name%3Da&resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=2&continue=tok&allowWatchBookmarks=true&sendInitialEvents=false&timeoutSeconds=30';
    const one = await call(s.url, `${ROOT}/namespaces/ns1/sharedsecrets?${q}`);
    assert.equal(one.status, 200);
    assert.equal(s.secrets.lastCall().ctx.namespace, 'ns1');
    assert.deepEqual(s.secrets.lastCall().listOptions, {
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name=a',
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
      limit: 2,
      continue: 'tok',
      allowWatchBookmarks: true,
      sendInitialEvents: false,
      timeoutSeconds: 30,
    });
    // The field selector names the object for authorization.
    assert.equal(s.authorizer.asked.at(-1)?.name, 'a');
    assert.equal(s.authorizer.asked.at(-1)?.verb, 'list');

    const bad = await call(s.url, `${ROOT}/teams?limit=-1`);
    assert.equal(bad.status, 400);
    const nan = await call(s.url, `${ROOT}/teams?limit=ten`);
    assert.equal(nan.status, 400);
    assert.match(nan.json<StatusBody>().message, /limit/);
  });

  it('404s a namespace path on a cluster-scoped kind and named paths outside a namespace', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    s.secrets.put({ metadata: { name: 'a', namespace: 'ns1' } });
    for (const path of [
      `${ROOT}/namespaces/ns1/teams`,
      `${ROOT}/namespaces/ns1/teams/red`,
      `${ROOT}/sharedsecrets/a`,
    ]) {
      const res = await call(s.url, path);
      assert.equal(res.status, 404, path);
      const body = res.json<StatusBody>();
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'NotFound');
      assert.equal(body.message, 'the server could not find the requested resource');
    }
    const post = await call(s.url, `${ROOT}/sharedsecrets`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
  });

  it('404s unknown groups, versions and resources with a Status, other paths with plain text', async () => {
    for (const path of [
      `${ROOT}/widgets`,
      `/apis/other.io/v1/teams`,
      `/apis/${GROUP}/v2/teams`,
      `${ROOT}/teams/a/b/c`,
    ]) {
      const res = await call(s.url, path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json<StatusBody>().message, 'the server could not find the requested resource');
    }
    const page = await call(s.url, '/nothing/here');
    assert.equal(page.status, 404);
    assert.equal(page.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(page.text, '404 page not found\n');
  });

  it('answers 401 without credentials and 403 with the Kubernetes forbidden message', async () => {
    const anon = await call(s.url, `${ROOT}/teams`, { token: null });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    const unknownToken = await call(s.url, '/apis', { token: 'nope' });
    assert.equal(unknownToken.status, 401);

    s.authorizer.decide = () => ({ decision: 'deny' });
    const cluster = await call(s.url, `${ROOT}/teams`, { token: 'bob-token' });
    assert.equal(cluster.status, 403);
    const body = cluster.json<StatusBody>();
    assert.equal(body.reason, 'Forbidden');
    assert.equal(
      body.message,
      `teams.${GROUP} is forbidden: User "bob" cannot list resource "teams" in API group "${GROUP}" at the cluster scope`,
    );
    assert.deepEqual(body.details, { group: GROUP, kind: 'teams' });

    s.authorizer.decide = () => ({ decision: 'no-opinion', reason: 'no rule allows it' });
    const ns = await call(s.url, `${ROOT}/namespaces/ns1/sharedsecrets/s1`, { token: 'bob-token' });
    assert.equal(ns.status, 403);
    assert.equal(
      ns.json<StatusBody>().message,
      `sharedsecrets.${GROUP} "s1" is forbidden: User "bob" cannot get resource "sharedsecrets" in API group "${GROUP}" in the namespace "ns1": no rule allows it`,
    );

    s.authorizer.decide = () => ({ decision: 'deny' });
    const nonResource = await call(s.url, '/apis', { token: 'bob-token' });
    assert.equal(nonResource.status, 403);
    assert.equal(nonResource.json<StatusBody>().message, 'forbidden: User "bob" cannot get path "/apis"');
    assert.equal(s.teams.calls.length + s.secrets.calls.length, 0);
  });

  it('answers 405 MethodNotSupported for a verb the storage lacks', async () => {
    const s2 = await startTestServer({
      prepare: (teams) => {
        (teams as { watch?: unknown }).watch = undefined;
        (teams as { deleteCollection?: unknown }).deleteCollection = undefined;
      },
    });
    try {
      const w = await call(s2.url, `${ROOT}/teams?watch=true`);
      assert.equal(w.status, 405);
      assert.equal(w.json<StatusBody>().reason, 'MethodNotAllowed');
      assert.equal(
        w.json<StatusBody>().message,
        `watch is not supported on resources of kind "teams.${GROUP}"`,
      );
      const dc = await call(s2.url, `${ROOT}/teams`, { method: 'DELETE' });
      assert.equal(dc.status, 405);
      assert.equal(
        dc.json<StatusBody>().message,
        `deletecollection is not supported on resources of kind "teams.${GROUP}"`,
      );
      const put = await call(s2.url, `${ROOT}/teams`, { method: 'PUT', body: '{}' });
      assert.equal(put.status, 405);
      assert.equal(
        put.json<StatusBody>().message,
        'the server does not allow this method on the requested resource',
      );
    } finally {
      await s2.close();
    }
  });

  it('takes YAML in and gives YAML out', async () => {
    const created = await call(s.url, `${ROOT}/teams`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml', accept: 'application/yaml' },
      body: 'metadata:\n  name: green\nspec:\n  color: green\n',
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers['content-type'], 'application/yaml');
    const obj = parseYAML(created.text) as { metadata: { name: string }; spec: { color: string } };
    assert.equal(obj.metadata.name, 'green');
    assert.equal(obj.spec.color, 'green');

    const err = await call(s.url, `${ROOT}/teams/missing`, { headers: { accept: 'application/yaml' } });
    assert.equal(err.status, 404);
    assert.equal(err.headers['content-type'], 'application/yaml');
    assert.equal((parseYAML(err.text) as StatusBody).reason, 'NotFound');
  });

  it('reports YAML duplicate keys per fieldValidation', async () => {
    const body = 'metadata:\n  name: dup\nspec:\n  color: a\n  color: b\n';
    const warn = await call(s.url, `${ROOT}/teams`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body,
    });
    assert.equal(warn.status, 201);
    assert.equal(warn.headers.warning, '299 - "line 5: key \\"color\\" already set in map"');

    const strict = await call(s.url, `${ROOT}/teams?fieldValidation=Strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: body.replace('dup', 'dup2'),
    });
    assert.equal(strict.status, 400);
    assert.match(
      strict.json<StatusBody>().message,
      /^Team in version "v1" cannot be handled as a Team: strict decoding error: yaml: unmarshal errors:\n {2}line 5: key "color" already set in map$/,
    );

    const ignore = await call(s.url, `${ROOT}/teams?fieldValidation=Ignore`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: body.replace('dup', 'dup3'),
    });
    assert.equal(ignore.status, 201);
    assert.equal(ignore.headers.warning, undefined);
  });

  it('rejects malformed, empty, non-map and unknown-type bodies', async () => {
    const malformed = await call(s.url, `${ROOT}/teams`, { method: 'POST', body: '{"metadata":' });
    assert.equal(malformed.status, 400);
    assert.match(malformed.json<StatusBody>().message, /^the request body is not valid JSON/);
    const empty = await call(s.url, `${ROOT}/teams`, { method: 'POST' });
    assert.equal(empty.status, 400);
    const yamlList = await call(s.url, `${ROOT}/teams`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: '- a\n',
    });
    assert.equal(yamlList.status, 400);
    const text = await call(s.url, `${ROOT}/teams`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(text.status, 415);
    assert.equal(text.json<StatusBody>().reason, 'UnsupportedMediaType');
    assert.equal(s.teams.calls.length, 0);
  });

  it('refuses bodies over the limit with 413 without reading them whole', async () => {
    const small = await startTestServer({ maxRequestBodyBytes: 1024 });
    try {
      const declared = await call(small.url, `${ROOT}/teams`, { method: 'POST', body: 'x'.repeat(4096) });
      assert.equal(declared.status, 413);
      assert.equal(declared.json<StatusBody>().message, 'Request entity too large: limit is 1024');
      assert.equal(declared.json<StatusBody>().reason, 'RequestEntityTooLarge');
      assert.equal(declared.headers.connection, 'close');
      // A chunked body (no Content-Length) is cut off as it streams in.
      const chunked = await new Promise<number>((resolve, reject) => {
        import('node:http')
          .then(({ request }) => {
            const req = request(`${small.url}${ROOT}/teams`, {
              method: 'POST',
              headers: { authorization: 'Bearer admin-token', 'transfer-encoding': 'chunked' },
              agent: false,
            });
            req.on('response', (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', reject);
            req.write('{"metadata":{"name":"');
            req.write('y'.repeat(2048));
          })
          .catch(reject);
      });
      assert.equal(chunked, 413);
      assert.equal(small.teams.calls.length, 0);
      // The server still serves.
      assert.equal((await call(small.url, `${ROOT}/teams`)).status, 200);
    } finally {
      await small.close();
    }
  });

  it('answers 406 with the upstream message when nothing acceptable is asked for', async () => {
    const res = await call(s.url, `${ROOT}/teams`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    assert.equal(res.status, 406);
    assert.equal(res.json<StatusBody>().reason, 'NotAcceptable');
    assert.equal(
      res.json<StatusBody>().message,
      'only the following media types are accepted: application/json, application/yaml',
    );
  });

  it('updates with 200, or 201 when the update created the object', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    const updated = await call(s.url, `${ROOT}/teams/red`, {
      method: 'PUT',
      body: '{"metadata":{"name":"red"}}',
    });
    assert.equal(updated.status, 200);
    const created = await call(s.url, `${ROOT}/teams/new`, {
      method: 'PUT',
      body: '{"metadata":{"name":"new"}}',
    });
    assert.equal(created.status, 201);
  });

  it('maps patch content types and passes force', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    const types: [string, string, string][] = [
      ['application/json-patch+json', '[{"op":"add","path":"/spec","value":{}}]', 'json'],
      ['application/merge-patch+json; charset=utf-8', '{"spec":{"color":"x"}}', 'merge'],
      ['application/strategic-merge-patch+json', '{"spec":{}}', 'strategic'],
      ['application/apply-patch+yaml', 'metadata:\n  name: red\n', 'apply'],
    ];
    for (const [contentType, body, patchType] of types) {
      const res = await call(
        s.url,
        `${ROOT}/teams/red?fieldManager=m${patchType === 'apply' ? '&force=true' : ''}`,
        {
          method: 'PATCH',
          headers: { 'content-type': contentType },
          body,
        },
      );
      assert.equal(res.status, 200, contentType);
      assert.equal(s.teams.lastCall().patchType, patchType);
    }
    assert.deepEqual(s.teams.lastCall().body, { metadata: { name: 'red' } });
    assert.equal((s.teams.lastCall().options as { force?: boolean }).force, true);
    const json = s.teams.calls.find((c) => c.patchType === 'json');
    assert.deepEqual(json?.body, [{ op: 'add', path: '/spec', value: {} }]);

    const unsupported = await call(s.url, `${ROOT}/teams/red`, { method: 'PATCH', body: '{}' });
    assert.equal(unsupported.status, 415);
    assert.match(
      unsupported.json<StatusBody>().message,
      /accepted media types include: application\/json-patch\+json/,
    );
  });

  it('deletes with options from the body or the query, 200 or 202 as upstream', async () => {
    s.teams.put({ metadata: { name: 'a', uid: 'u1' } });
    const gone = await call(s.url, `${ROOT}/teams/a`, {
      method: 'DELETE',
      body: JSON.stringify({
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: 'Foreground',
        preconditions: { uid: 'u1' },
      }),
    });
    assert.equal(gone.status, 200);
    assert.equal(gone.json<StatusBody>().status, 'Success');
    assert.deepEqual(s.teams.lastCall().options, {
      propagationPolicy: 'Foreground',
      preconditions: { uid: 'u1' },
      dryRunAll: false,
    });

    s.teams.put({ metadata: { name: 'b' } });
    await call(s.url, `${ROOT}/teams/b?gracePeriodSeconds=0&propagationPolicy=Orphan&dryRun=All`, {
      method: 'DELETE',
    });
    assert.deepEqual(s.teams.lastCall().options, {
      gracePeriodSeconds: 0,
      propagationPolicy: 'Orphan',
      dryRun: ['All'],
      dryRunAll: true,
    });

    s.teams.keepOnDelete = true;
    const kept = await call(s.url, `${ROOT}/teams/b`, { method: 'DELETE' });
    assert.equal(kept.status, 200);
    const accepted = await call(s.url, `${ROOT}/teams/b`, {
      method: 'DELETE',
      body: '{"orphanDependents":false}',
    });
    assert.equal(accepted.status, 202);

    const yaml = await call(s.url, `${ROOT}/teams/b`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/yaml' },
      body: 'kind: DeleteOptions\ngracePeriodSeconds: 5\n',
    });
    assert.equal(yaml.status, 200);
    assert.equal((s.teams.lastCall().options as { gracePeriodSeconds?: number }).gracePeriodSeconds, 5);

    const wrongKind = await call(s.url, `${ROOT}/teams/b`, { method: 'DELETE', body: '{"kind":"Team"}' });
    assert.equal(wrongKind.status, 400);
    const badDry = await call(s.url, `${ROOT}/teams/b?dryRun=Some`, { method: 'DELETE' });
    assert.equal(badDry.status, 422);
    assert.match(
      badDry.json<StatusBody>().message,
      /^DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value/,
    );
  });

  it('deletes collections with list and delete options', async () => {
    s.secrets.put({ metadata: { name: 'a', namespace: 'ns1' } });
    const res = await call(s.url, `${ROOT}/namespaces/ns1/sharedsecrets?labelSelector=x%3Dy`, {
      method: 'DELETE',
      body: '{"propagationPolicy":"Background"}',
    });
    assert.equal(res.status, 200);
    assert.equal(res.json<{ kind: string }>().kind, 'SharedSecretList');
    const last = s.secrets.lastCall();
    assert.equal(last.verb, 'deletecollection');
    assert.deepEqual(last.listOptions, { labelSelector: 'x=y' });
    assert.equal((last.options as { propagationPolicy?: string }).propagationPolicy, 'Background');
    assert.equal(s.authorizer.asked.at(-1)?.verb, 'deletecollection');
  });

  it('sends one Warning header per distinct warning, quotes escaped', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    s.teams.warnings = ['unknown field "spec.colour"', 'plain warning', 'plain warning', 'ünïcode', '€uro'];
    const res = await call(s.url, `${ROOT}/teams/red`);
    assert.equal(res.status, 200);
    const raw = res.headers.warning;
    assert.ok(raw);
    const parts = Buffer.from(raw, 'latin1').toString('utf8').split(', 299');
    // UTF-8 on the wire; what a header cannot carry at all becomes '?'.
    assert.deepEqual(parts, [
      '299 - "unknown field \\"spec.colour\\""',
      ' - "plain warning"',
      ' - "ünïcode"',
      ' - "?uro"',
    ]);
    // Warnings go out with errors too.
    const err = await call(s.url, `${ROOT}/teams/missing`);
    assert.equal(err.status, 404);
    assert.ok(err.headers.warning);
  });

  it('marks every API response Cache-Control: no-cache, private', async () => {
    for (const path of [`${ROOT}/teams`, `${ROOT}/teams/missing`, '/apis', '/version']) {
      const res = await call(s.url, path);
      assert.equal(res.headers['cache-control'], 'no-cache, private', path);
    }
  });

  it('turns registry errors into Status responses, with Retry-After, and hides internal ones', async () => {
    const teams = s.teams as unknown as { get: unknown };
    const original = teams.get;
    try {
      teams.get = async () => {
        throw newTooManyRequests('slow down', 7);
      };
      const busy = await call(s.url, `${ROOT}/teams/x`);
      assert.equal(busy.status, 429);
      assert.equal(busy.headers['retry-after'], '7');

      teams.get = async () => {
        throw newConflict({ group: GROUP, resource: 'teams' }, 'x', 'boom');
      };
      assert.equal((await call(s.url, `${ROOT}/teams/x`)).status, 409);

      teams.get = async () => {
        throw new Error('database password is hunter2');
      };
      const internal = await call(s.url, `${ROOT}/teams/x`);
      assert.equal(internal.status, 500);
      const body = internal.json<StatusBody>();
      assert.equal(body.reason, 'InternalError');
      assert.doesNotMatch(internal.text, /hunter2/);
      const logged = s.logger.lines.find(
        (l) => l.level === 'error' && String(l.fields.error).includes('hunter2'),
      );
      assert.ok(logged, 'the cause is logged');
    } finally {
      teams.get = original;
    }
  });

  it('aborts the request context when the client goes away mid-request', async () => {
    const teams = s.teams as unknown as { get: unknown };
    const original = teams.get;
    let aborted!: () => void;
    const sawAbort = new Promise<void>((resolve) => (aborted = resolve));
    let started!: () => void;
    const inRegistry = new Promise<void>((resolve) => (started = resolve));
    teams.get = (ctx: { signal?: AbortSignal }) =>
      new Promise((_, reject) => {
        started();
        ctx.signal?.addEventListener('abort', () => {
          aborted();
          reject(new Error('client went away'));
        });
      });
    try {
      const { request } = await import('node:http');
      const req = request(`${s.url}${ROOT}/teams/slow`, {
        headers: { authorization: 'Bearer admin-token' },
        agent: false,
      });
      req.on('error', () => undefined);
      req.end();
      await inRegistry;
      req.destroy();
      await sawAbort;
    } finally {
      teams.get = original;
    }
  });

  it('pretty-prints for curl and ?pretty, compact otherwise', async () => {
    s.teams.put({ metadata: { name: 'red' } });
    const curl = await call(s.url, `${ROOT}/teams/red`, { headers: { 'user-agent': 'curl/8.5.0' } });
    assert.match(curl.text, /^\{\n {2}"/);
    const kubectl = await call(s.url, `${ROOT}/teams/red`, { headers: { 'user-agent': 'kubectl/v1.32.0' } });
    assert.match(kubectl.text, /^\{"/);
    const pretty = await call(s.url, `${ROOT}/teams/red?pretty=true`);
    assert.match(pretty.text, /^\{\n/);
  });

  it('logs one line per request without secrets', async () => {
    s.logger.lines.length = 0;
    await call(s.url, `${ROOT}/teams?labelSelector=secret%3Dvalue`, {
      headers: { 'x-extra': 'header-value' },
    });
    await new Promise((r) => setImmediate(r));
    const lines = s.logger.lines.filter((l) => l.msg === 'request');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.level, 'debug', 'as kube-apiserver logs requests from -v=3 only');
    const fields = lines[0]?.fields ?? {};
    assert.equal(fields.method, 'GET');
    assert.equal(fields.path, `${ROOT}/teams`);
    assert.equal(fields.verb, 'list');
    assert.equal(fields.resource, 'teams');
    assert.equal(fields.code, 200);
    assert.equal(fields.user, 'alice');
    assert.equal(typeof fields.durationMs, 'number');
    const text = JSON.stringify(lines);
    assert.doesNotMatch(text, /admin-token|header-value|secret%3Dvalue|secret=value/);
  });

  it('logs no line per request at the default level, info', async () => {
    s.logger.lines.length = 0;
    s.logger.minLevel = 'info';
    try {
      await call(s.url, `${ROOT}/teams`);
      await call(s.url, `${ROOT}/teams/missing`);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        s.logger.lines.filter((l) => l.msg === 'request'),
        [],
      );
    } finally {
      s.logger.minLevel = 'debug';
    }
  });

  it('passes the user, namespace and user agent to the registry', async () => {
    s.secrets.put({ metadata: { name: 'a', namespace: 'ns1' } });
    await call(s.url, `${ROOT}/namespaces/ns1/sharedsecrets/a`, {
      token: 'bob-token',
      headers: { 'user-agent': 'kubectl/v1' },
    });
    const ctx = s.secrets.lastCall().ctx;
    assert.equal(ctx.user.name, 'bob');
    assert.equal(ctx.namespace, 'ns1');
    assert.equal(ctx.userAgent, 'kubectl/v1');
  });
});

describe('subresources over HTTP', () => {
  let s: TestServer;
  const seen: { verb: string; parent: string; namespace: string; body?: unknown; dryRun?: boolean }[] = [];
  before(async () => {
    s = await startTestServer({
      prepare: (teams, secrets) => {
        secrets.subresources = new Map([
          [
            'kubeconfig',
            {
              info: { name: 'kubeconfig', kind: 'VirtualClusterInstanceKubeConfig', verbs: ['create'] },
              create: async (ctx, parent, body, options) => {
                seen.push({ verb: 'create', parent, namespace: ctx.namespace, body, dryRun: options.dryRun });
                return {
                  kind: 'VirtualClusterInstanceKubeConfig',
                  metadata: { name: parent },
                  status: { kubeConfig: 'x' },
                };
              },
            },
          ],
        ]);
        teams.subresources = new Map([
          [
            'accesskeys',
            {
              info: { name: 'accesskeys', kind: 'OwnedAccessKeyList', verbs: ['get'] },
              get: async (ctx, parent) => {
                seen.push({ verb: 'get', parent, namespace: ctx.namespace });
                return { apiVersion: `${GROUP}/v1`, kind: 'OwnedAccessKeyList', metadata: {}, items: [] };
              },
            },
          ],
        ]);
      },
    });
  });
  after(async () => {
    await s.close();
  });

  it('POSTs to a create subresource with 201 and the parent name and namespace', async () => {
    const res = await call(s.url, `${PREFIXED}/namespaces/p-one/sharedsecrets/vc1/kubeconfig?dryRun=All`, {
      method: 'POST',
      body: '{"spec":{"certificateTTL":86400}}',
    });
    assert.equal(res.status, 201);
    assert.equal(res.json<{ status: { kubeConfig: string } }>().status.kubeConfig, 'x');
    assert.deepEqual(seen.at(-1), {
      verb: 'create',
      parent: 'vc1',
      namespace: 'p-one',
      body: { spec: { certificateTTL: 86400 } },
      dryRun: true,
    });
    const attrs = s.authorizer.asked.at(-1);
    assert.equal(attrs?.verb, 'create');
    assert.equal(attrs?.subresource, 'kubeconfig');
    assert.equal(attrs?.name, 'vc1');
  });

  it('GETs a read subresource, and names the subresource when forbidden', async () => {
    const res = await call(s.url, `${ROOT}/teams/devs/accesskeys`);
    assert.equal(res.status, 200);
    assert.equal(res.json<{ kind: string }>().kind, 'OwnedAccessKeyList');
    assert.deepEqual(seen.at(-1), { verb: 'get', parent: 'devs', namespace: '' });

    s.authorizer.decide = () => ({ decision: 'deny' });
    try {
      const denied = await call(s.url, `${ROOT}/teams/devs/accesskeys`, { token: 'bob-token' });
      assert.equal(denied.status, 403);
      assert.equal(
        denied.json<StatusBody>().message,
        `teams.${GROUP} "devs" is forbidden: User "bob" cannot get resource "teams/accesskeys" in API group "${GROUP}" at the cluster scope`,
      );
    } finally {
      s.authorizer.decide = () => ({ decision: 'allow' });
    }
  });

  it('404s unknown subresources and 405s verbs a subresource lacks', async () => {
    assert.equal((await call(s.url, `${ROOT}/teams/devs/status`)).status, 404);
    const post = await call(s.url, `${ROOT}/teams/devs/accesskeys`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(
      post.json<StatusBody>().message,
      `create is not supported on resources of kind "teams/accesskeys.${GROUP}"`,
    );
    const get = await call(s.url, `${ROOT}/namespaces/p/sharedsecrets/vc1/kubeconfig`);
    assert.equal(get.status, 405);
  });
});
