import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { parse as parseYAML } from 'yaml';

import type { Table } from '../apis/meta/types.js';
import { call, GROUP, startTestServer, type TestServer } from './testing/fakes.js';

const ROOT = `/apis/${GROUP}/v1`;
const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const KUBECTL_GET = `${TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;

interface PartialList {
  kind: string;
  apiVersion: string;
  metadata: Record<string, unknown>;
  items: { kind: string; apiVersion: string; metadata: { name: string } }[];
}

describe('Table and PartialObjectMetadata responses', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });
  beforeEach(() => {
    s.teams.objects.clear();
    s.teams.put({ metadata: { name: 'red', labels: { a: 'b' } }, spec: { color: 'red' } });
    s.teams.put({ metadata: { name: 'blue' }, spec: { color: 'blue' } });
  });

  it('answers kubectl get with a Table of one row per item, metadata rows by default', async () => {
    const res = await call(s.url, `${ROOT}/teams?limit=1`, { headers: { accept: KUBECTL_GET } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const table = res.json<Table>();
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Color'],
    );
    assert.deepEqual(
      table.rows.map((r) => r.cells),
      [
        ['red', 'red'],
        ['blue', 'blue'],
      ],
    );
    assert.equal((table.rows[0]?.object as { kind: string }).kind, 'PartialObjectMetadata');
    // Paged tables keep the continue token.
    assert.equal(table.metadata.continue, 'next-page');
  });

  it('honours includeObject and the v1beta1 group version', async () => {
    const none = await call(s.url, `${ROOT}/teams/red?includeObject=None`, { headers: { accept: TABLE_V1 } });
    assert.deepEqual(none.json<Table>().rows, [{ cells: ['red', 'red'] }]);

    const object = await call(s.url, `${ROOT}/teams/red?includeObject=Object`, {
      headers: { accept: TABLE_V1 },
    });
    assert.equal((object.json<Table>().rows[0]?.object as { kind: string }).kind, 'Team');

    const beta = await call(s.url, `${ROOT}/teams/red`, {
      headers: { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' },
    });
    const table = beta.json<Table>();
    assert.equal(table.apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal((table.rows[0]?.object as { apiVersion: string }).apiVersion, 'meta.k8s.io/v1beta1');

    const bad = await call(s.url, `${ROOT}/teams/red?includeObject=All`, { headers: { accept: TABLE_V1 } });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.json<{ message: string }>().message,
      `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`,
    );
  });

  it('serves a Table as YAML', async () => {
    const res = await call(s.url, `${ROOT}/teams`, {
      headers: { accept: 'application/yaml;as=Table;v=v1;g=meta.k8s.io' },
    });
    assert.equal(res.headers['content-type'], 'application/yaml');
    assert.equal((parseYAML(res.text) as Table).kind, 'Table');
  });

  it('406s a Table request for a resource without table conversion, and falls back when JSON is also accepted', async () => {
    const s2 = await startTestServer({
      prepare: (teams) => {
        (teams as { convertToTable?: unknown }).convertToTable = undefined;
      },
    });
    try {
      s2.teams.put({ metadata: { name: 'red' } });
      const only = await call(s2.url, `${ROOT}/teams`, { headers: { accept: TABLE_V1 } });
      assert.equal(only.status, 406);
      assert.equal(
        only.json<{ message: string }>().message,
        `the resource teams.${GROUP} does not support being converted to a Table`,
      );
      const fallback = await call(s2.url, `${ROOT}/teams`, { headers: { accept: KUBECTL_GET } });
      assert.equal(fallback.status, 200);
      assert.equal(fallback.json<{ kind: string }>().kind, 'TeamList');
    } finally {
      await s2.close();
    }
  });

  it('answers the metadata client with PartialObjectMetadata(List)', async () => {
    const list = await call(s.url, `${ROOT}/teams`, {
      headers: {
        accept:
          'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      },
    });
    assert.equal(list.status, 200);
    const body = list.json<PartialList>();
    assert.equal(body.kind, 'PartialObjectMetadataList');
    assert.equal(body.apiVersion, 'meta.k8s.io/v1');
    assert.ok(body.metadata.resourceVersion);
    assert.deepEqual(
      body.items.map((i) => [i.kind, i.apiVersion, i.metadata.name]),
      [
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'red'],
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'blue'],
      ],
    );
    assert.equal('spec' in (body.items[0] ?? {}), false);

    const one = await call(s.url, `${ROOT}/teams/red`, {
      headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    const obj = one.json<{ kind: string; metadata: { labels: Record<string, string> }; spec?: unknown }>();
    assert.equal(obj.kind, 'PartialObjectMetadata');
    assert.deepEqual(obj.metadata.labels, { a: 'b' });
    assert.equal(obj.spec, undefined);
  });

  it('406s a list asked for as PartialObjectMetadata and an object asked for as a list', async () => {
    const list = await call(s.url, `${ROOT}/teams`, {
      headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    assert.equal(list.status, 406);
    assert.match(
      list.json<{ message: string }>().message,
      /^you requested PartialObjectMetadata, but the requested object is a list/,
    );
    const obj = await call(s.url, `${ROOT}/teams/red`, {
      headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
    });
    assert.equal(obj.status, 406);
    assert.match(
      obj.json<{ message: string }>().message,
      /^you requested PartialObjectMetadataList, but the requested object is not a list/,
    );
  });

  it('never converts a Status: a delete answered as a Table is still a Status', async () => {
    const res = await call(s.url, `${ROOT}/teams/blue`, { method: 'DELETE', headers: { accept: TABLE_V1 } });
    assert.equal(res.status, 200);
    assert.equal(res.json<{ kind: string }>().kind, 'Status');
  });
});
