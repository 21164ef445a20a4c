// The HTTP layer over the real registry (generic Store with the management
// strategies) and embedded SQLite storage: the wire behaviour kubectl and client
// libraries see, end to end inside one process.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeObject, Table } from '../apis/meta/types.js';
import { call, openWatch } from './testing/fakes.js';
import { startRegistryServer, type RegistryServer } from './testing/registry-server.js';

const GROUP = 'management.platform.dev';
const ROOT = `/kubernetes/management/apis/${GROUP}/v1`;

describe('HTTP layer over the generic registry and SQLite', { timeout: 60_000 }, () => {
  let server: RegistryServer;
  let url: string;

  before(async () => {
    server = await startRegistryServer(['/kubernetes/management']);
    url = server.url;
  });

  after(async () => {
    await server.close();
  });

  it('creates from YAML, reads, lists as a Table, patches, and deletes a team', async () => {
    const created = await call(url, `${ROOT}/teams`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: 'apiVersion: management.platform.dev/v1\nkind: Team\nmetadata:\n  name: red\nspec:\n  displayName: Red\n',
    });
    assert.equal(created.status, 201, created.text);
    const team = created.json<KubeObject>();
    assert.equal(team.kind, 'Team');
    assert.ok(team.metadata.resourceVersion);
    assert.ok(team.metadata.uid);

    const got = await call(url, `${ROOT}/teams/red`);
    assert.equal(got.status, 200);

    const table = await call(url, `${ROOT}/teams`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    assert.equal(table.status, 200);
    const t = table.json<Table>();
    assert.equal(t.kind, 'Table');
    assert.equal(t.rows.length, 1);
    assert.equal(t.rows[0]?.cells[0], 'red');

    const patched = await call(url, `${ROOT}/teams/red`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"spec":{"description":"the red team"}}',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json<{ spec: { description: string } }>().spec.description, 'the red team');

    const deleted = await call(url, `${ROOT}/teams/red`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.json<{ kind: string; status: string }>().status, 'Success');
    const missing = await call(url, `${ROOT}/teams/red`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json<{ message: string }>().message, `teams.${GROUP} "red" not found`);
  });

  it('warns about unknown fields and refuses them under Strict', async () => {
    const body = JSON.stringify({ metadata: { name: 'blue' }, spec: { colour: 'blue' } });
    const strict = await call(url, `${ROOT}/teams?fieldValidation=Strict`, { method: 'POST', body });
    assert.equal(strict.status, 400);
    assert.match(strict.json<{ message: string }>().message, /unknown field "spec\.colour"/);
    const warn = await call(url, `${ROOT}/teams`, { method: 'POST', body });
    assert.equal(warn.status, 201);
    assert.equal(warn.headers.warning, '299 - "unknown field \\"spec.colour\\""');
  });

  it('streams watch events of real writes, namespaced and cluster-wide', async () => {
    const list = await call(url, `${ROOT}/namespaces/ns1/sharedsecrets`);
    assert.equal(list.status, 200, list.text);
    const rv = list.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const stream = await openWatch(url, `${ROOT}/sharedsecrets?watch=true&resourceVersion=${rv}`);
    assert.equal(stream.status, 200);
    const created = await call(url, `${ROOT}/namespaces/ns1/sharedsecrets`, {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 's1' }, spec: { data: { k: 'dmFsdWU=' } } }),
    });
    assert.equal(created.status, 201, created.text);
    const line = await stream.nextLine();
    const event = JSON.parse(line ?? '') as { type: string; object: KubeObject };
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.metadata.name, 's1');
    assert.equal(event.object.metadata.namespace, 'ns1');
    stream.abort();
  });

  it('answers the registry’s own errors as Status objects', async () => {
    const conflict = await call(url, `${ROOT}/teams`, {
      method: 'POST',
      body: '{"metadata":{"name":"blue"}}',
    });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json<{ reason: string }>().reason, 'AlreadyExists');
    const invalid = await call(url, `${ROOT}/teams`, {
      method: 'POST',
      body: '{"metadata":{"name":"Not_Valid"}}',
    });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.json<{ reason: string }>().reason, 'Invalid');
    // An apply names its manager (PatchOptions validation).
    const apply = await call(url, `${ROOT}/teams/blue`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: 'metadata:\n  name: blue\n',
    });
    assert.equal(apply.status, 422);
    assert.equal(
      apply.json<{ message: string }>().message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });
});
