// Input no well-behaved client sends, over raw HTTPS: the server must refuse it with
// the right status and a Kubernetes Status body, change nothing, and keep serving.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, GROUP, GROUP_VERSION, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import type { ApiResponse } from './https-client.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;

interface Status {
  kind: string;
  apiVersion: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    kind?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/** Asserts a failure Status with this code and reason, and returns it. */
function failureStatus(r: ApiResponse, code: number, reason: string): Status {
  assert.equal(r.status, code, `expected ${code}, got ${r.status}: ${r.text.slice(0, 500)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const s = r.json<Status>();
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason, `reason of: ${s.message}`);
  return s;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

for (const backend of backends()) {
  describe(`bad input over raw HTTPS on ${backend}`, () => {
    let s: TestServer;
    const secrets = `${V1}/namespaces/e2e-raw/sharedsecrets`;

    before(async () => {
      s = await startServer({ backend });
    });
    after(async () => {
      await s?.stop();
    });

    /** The server still answers reads and writes normally. */
    async function stillServes(): Promise<void> {
      assert.equal(s.isRunning(), true, `the server died:\n${s.logTail()}`);
      const ready = await s.api('GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.equal(ready.text.trim(), 'ok');
      const list = await s.api('GET', `${V1}/teams`);
      assert.equal(list.status, 200, list.text);
      assert.equal(list.json<{ kind: string }>().kind, 'TeamList');
    }

    it('malformed JSON is a 400 BadRequest', TEST, async () => {
      const r = await s.api('POST', secrets, '{"apiVersion": "x", "kind": ', {
        'Content-Type': 'application/json',
      });
      const status = failureStatus(r, 400, 'BadRequest');
      assert.ok(
        status.message.length > 0 && status.message.length < 1000,
        `a short message: ${status.message}`,
      );
      const notObject = await s.api('POST', secrets, '[1, 2, 3]', { 'Content-Type': 'application/json' });
      failureStatus(notObject, 400, 'BadRequest');
      await stillServes();
    });

    it('a YAML alias bomb is refused and the server keeps serving', TEST, async () => {
      // "Billion laughs": 9 levels of 9 aliases each expand to 9^9 strings.
      const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
      let yaml = `apiVersion: ${GROUP_VERSION}\nkind: SharedSecret\nmetadata:\n  name: bomb\n`;
      yaml += `lol0: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
      for (let i = 1; i < levels.length; i++) {
        const prev = levels[i - 1] as string;
        yaml += `lol${i}: &${levels[i]} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
      }
      const r = await s.api('POST', secrets, yaml, { 'Content-Type': 'application/yaml' });
      assert.ok(
        r.status === 400 || r.status === 413,
        `expected 400 or 413, got ${r.status}: ${r.text.slice(0, 300)}`,
      );
      failureStatus(r, r.status, r.status === 400 ? 'BadRequest' : 'RequestEntityTooLarge');
      assert.equal((await s.api('GET', `${secrets}/bomb`)).status, 404);
      await stillServes();
    });

    it("YAML map keys are the JSON keys kube-apiserver's YAMLToJSON makes", TEST, async () => {
      // An integer key keeps its digits past 2^53, 0x1F is 31, `on` is YAML 1.1's true.
      const yaml =
        `apiVersion: ${GROUP_VERSION}\nkind: SharedSecret\nmetadata:\n  name: int-keys\nspec:\n` +
        `  data:\n    9007199254740993: ${b64('a')}\n    0x1F: ${b64('b')}\n    on: ${b64('c')}\n`;
      const r = await s.api('POST', secrets, yaml, { 'Content-Type': 'application/yaml' });
      assert.equal(r.status, 201, r.text);
      const data = r.json<{ spec: { data: Record<string, string> } }>().spec.data;
      assert.deepEqual(Object.keys(data).sort(), ['31', '9007199254740993', 'true']);
      const bigKey = `apiVersion: ${GROUP_VERSION}\nkind: SharedSecret\nmetadata:\n  name: big-key\nspec:\n  data:\n    9223372036854775808: ${b64('x')}\n`;
      const unsupported = await s.api('POST', secrets, bigKey, { 'Content-Type': 'application/yaml' });
      const status = failureStatus(unsupported, 400, 'BadRequest');
      // A create words YAMLToJSON's error as handlers/rest.go transformDecodeError does, with
      // summarizeData's hex of the first 30 bytes (here all apiVersion, so shown).
      assert.equal(
        status.message,
        'the object provided is unrecognized (must be of type SharedSecret): unsupported map key of type: ' +
          `uint64, key: 0x8000000000000000 (${Buffer.from(bigKey).subarray(0, 30).toString('hex')} ...)`,
      );
      assert.equal((await s.api('GET', `${secrets}/big-key`)).status, 404);
    });

    it("YAML values are what kube-apiserver's YAMLToJSON makes of them", TEST, async () => {
      // goyaml.v2 reads plain scalars by YAML 1.1's rules: `yes` is true, `0x10` is 16;
      // a quoted scalar stays a string. A value JSON cannot carry (.inf) is refused whole.
      const yaml =
        `apiVersion: ${GROUP_VERSION}\nkind: User\nmetadata:\n  name: yaml11-user\n` +
        `spec:\n  username: "yes"\n  displayName: off-duty\n  disabled: yes\n  tokenGeneration: 0x10\n`;
      const r = await s.api('POST', `${V1}/users`, yaml, { 'Content-Type': 'application/yaml' });
      assert.equal(r.status, 201, r.text);
      const read = await s.api('GET', `${V1}/users/yaml11-user`);
      const spec = read.json<{ spec: Record<string, unknown> }>().spec;
      assert.equal(spec.disabled, true);
      assert.equal(spec.tokenGeneration, 16);
      assert.equal(spec.username, 'yes');
      assert.equal(spec.displayName, 'off-duty');
      const infBody = `apiVersion: ${GROUP_VERSION}\nkind: User\nmetadata:\n  name: yaml11-inf\nspec:\n  tokenGeneration: .inf\n`;
      const inf = await s.api('POST', `${V1}/users`, infBody, { 'Content-Type': 'application/yaml' });
      const status = failureStatus(inf, 400, 'BadRequest');
      assert.equal(
        status.message,
        'the object provided is unrecognized (must be of type User): json: unsupported value: +Inf ' +
          `(${Buffer.from(infBody).subarray(0, 30).toString('hex')} ...)`,
      );
      assert.equal((await s.api('GET', `${V1}/users/yaml11-inf`)).status, 404);
    });

    it('YAML merge keys, collection keys and alias keys read as goyaml.v2 reads them', TEST, async () => {
      // Merged at the `<<`: what follows wins, what came before loses (sigs.k8s.io/yaml v1.4).
      // `*z` as a key is its anchor's scalar.
      const yaml =
        `apiVersion: ${GROUP_VERSION}\nkind: SharedSecret\nmetadata:\n  name: merged\n` +
        `  labels: &base {tier: web, team: blue}\n  annotations:\n    team: red\n    <<: *base\n    zone: &z a\n` +
        `spec:\n  data:\n    one: ${b64('1')}\n    <<: [{two: ${b64('2')}}, {two: ${b64('x')}}]\n    *z : ${b64('3')}\n`;
      const r = await s.api('POST', secrets, yaml, { 'Content-Type': 'application/yaml' });
      assert.equal(r.status, 201, r.text);
      const read = await s.api('GET', `${secrets}/merged`);
      const obj = read.json<{
        metadata: { labels: Record<string, string>; annotations: Record<string, string> };
        spec: { data: Record<string, string> };
      }>();
      assert.deepEqual(obj.metadata.labels, { tier: 'web', team: 'blue' });
      assert.deepEqual(obj.metadata.annotations, { team: 'blue', tier: 'web', zone: 'a' });
      assert.deepEqual(obj.spec.data, { one: b64('1'), two: b64('2'), a: b64('3') });
      // Strict: a merged entry set over another is a duplicate, as YAMLToJSONStrict reports it.
      const strict = await s.api('POST', `${secrets}?fieldValidation=Strict`, yaml.replace('name: merged', 'name: strict'), {
        'Content-Type': 'application/yaml',
      });
      assert.equal(
        failureStatus(strict, 400, 'BadRequest').message,
        'SharedSecret in version "v1" cannot be handled as a SharedSecret: strict decoding error: ' +
          'yaml: unmarshal errors:\n  line 5: key "team" already set in map\n  line 13: key "two" already set in map',
      );
      // A collection key: goyaml's 400, worded for a create; nothing stored.
      const collection = `apiVersion: ${GROUP_VERSION}\nkind: SharedSecret\nmetadata:\n  name: coll\nspec:\n  data:\n    ? [a, b]\n    : ${b64('s')}\n`;
      const refused = await s.api('POST', secrets, collection, { 'Content-Type': 'application/yaml' });
      assert.equal(
        failureStatus(refused, 400, 'BadRequest').message,
        'the object provided is unrecognized (must be of type SharedSecret): yaml: invalid map key: ' +
          `[]interface {}{...} (${Buffer.from(collection).subarray(0, 30).toString('hex')} ...)`,
      );
      assert.equal((await s.api('GET', `${secrets}/coll`)).status, 404);
      // The same through server-side apply: sigs.k8s.io/yaml Unmarshal's and patch.go's prefixes.
      const applied = await s.api('PATCH', `${secrets}/coll?fieldManager=e2e`, collection, {
        'Content-Type': 'application/apply-patch+yaml',
      });
      assert.equal(
        failureStatus(applied, 400, 'BadRequest').message,
        'error decoding YAML: error converting YAML to JSON: yaml: invalid map key: []interface {}{...}',
      );
      assert.equal((await s.api('GET', `${secrets}/coll`)).status, 404);
      // No value reaches the server's log through a YAML warning either.
      assert.doesNotMatch(s.logTail(), /stringified/);
      await stillServes();
    });

    it('a body over 3 MiB is a 413', TEST, async () => {
      const big = JSON.stringify({
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'too-big' },
        spec: { data: { blob: 'A'.repeat(3 * 1024 * 1024 + 1024) } },
      });
      const r = await s.api('POST', secrets, big, { 'Content-Type': 'application/json' });
      const status = failureStatus(r, 413, 'RequestEntityTooLarge');
      assert.match(status.message, /limit is 3145728/);
      assert.equal((await s.api('GET', `${secrets}/too-big`)).status, 404);
      await stillServes();

      // Just under the limit is fine (the data itself is valid base64).
      const justUnder = await s.api(
        'POST',
        secrets,
        {
          apiVersion: GROUP_VERSION,
          kind: 'SharedSecret',
          metadata: { name: 'big-but-ok' },
          spec: { data: { blob: 'A'.repeat(1024 * 1024) } },
        },
        {},
      );
      assert.equal(justUnder.status, 201, justUnder.text.slice(0, 500));
    });

    it('an unsupported content type is a 415', TEST, async () => {
      const body = JSON.stringify({
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'text' },
      });
      const r = await s.api('POST', secrets, body, { 'Content-Type': 'text/plain' });
      const status = failureStatus(r, 415, 'UnsupportedMediaType');
      assert.match(
        status.message,
        /the body of the request was in an unknown format - accepted media types include: /,
      );
      assert.match(status.message, /application\/json/);
      assert.equal((await s.api('GET', `${secrets}/text`)).status, 404);
      await stillServes();
    });

    it('invalid base64 in spec.data is a 422 naming spec.data[key], and nothing changes', TEST, async () => {
      const created = await s.api('POST', secrets, {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'creds' },
        spec: { displayName: 'Credentials', data: { password: b64('s3cret') } },
      });
      assert.equal(created.status, 201, created.text);
      const before = (await s.api('GET', `${secrets}/creds`)).json<{
        metadata: { resourceVersion: string };
        spec: unknown;
      }>();

      // As an update (merge patch) of the existing object...
      const patched = await s.api(
        'PATCH',
        `${secrets}/creds`,
        { spec: { data: { password: 'not base64!' } } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      const status = failureStatus(patched, 422, 'Invalid');
      assert.equal(status.details?.name, 'creds');
      assert.equal(status.details?.kind, 'SharedSecret');
      assert.ok(
        status.details?.causes?.some((c) => c.field === 'spec.data[password]'),
        `causes name spec.data[password]: ${JSON.stringify(status.details?.causes)}`,
      );
      assert.match(
        status.message,
        /^SharedSecret\.management\.platform\.dev "creds" is invalid: spec\.data\[password\]/,
      );
      const after = (await s.api('GET', `${secrets}/creds`)).json<{
        metadata: { resourceVersion: string };
        spec: unknown;
      }>();
      assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
      assert.deepEqual(after.spec, before.spec);

      // ...as a full replacement...
      const put = await s.api('PUT', `${secrets}/creds`, {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'creds', namespace: 'e2e-raw', resourceVersion: before.metadata.resourceVersion },
        spec: { displayName: 'Credentials', data: { password: 'c2VjcmV0', 'api-key': 'Zm9v=' } },
      });
      const putStatus = failureStatus(put, 422, 'Invalid');
      assert.deepEqual(
        putStatus.details?.causes?.map((c) => c.field),
        ['spec.data[api-key]'],
        'only the bad key is named',
      );
      const afterPut = (await s.api('GET', `${secrets}/creds`)).json<{
        metadata: { resourceVersion: string };
      }>();
      assert.equal(afterPut.metadata.resourceVersion, before.metadata.resourceVersion);

      // ...and on create, where nothing is stored.
      const bad = await s.api('POST', secrets, {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'bad-create' },
        spec: { data: { token: '%%%' } },
      });
      const createStatus = failureStatus(bad, 422, 'Invalid');
      assert.ok(createStatus.details?.causes?.some((c) => c.field === 'spec.data[token]'));
      assert.equal((await s.api('GET', `${secrets}/bad-create`)).status, 404);
      await stillServes();
    });
  });
}
