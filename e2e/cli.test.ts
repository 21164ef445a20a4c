// The `platform` command-line client against a started server: login (good, bad
// and expired keys, http refused, unknown CA, unreachable), the stored login file,
// --access-key overrides, Global Secrets with binary values, and access keys.
// Everything is observed as a user would: exit codes, output, files written.

import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { backends, GROUP_VERSION, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { cliRunner, oneLineError } from './cli-runner.js';
import type { CliRunner } from './cli-runner.js';

const TEST = { timeout: 120_000 };

interface CreatedKey {
  metadata: { name: string };
  spec: { key: string; user?: string };
}

describe('platform CLI', () => {
  let server: TestServer;
  let cli: CliRunner;
  let caFile: string;
  let host: string;

  before(async () => {
    // The client does not depend on the storage backend: one backend is enough.
    server = await startServer({ backend: backends()[0] ?? 'sqlite' });
    cli = cliRunner();
    caFile = join(cli.home, 'platform-ca.pem');
    writeFileSync(caFile, server.ca);
    host = server.url.replace(/^https:\/\//, '');
    await cli.ok(['login', host, '--access-key', server.token, '--ca-file', caFile]);
  });

  after(async () => {
    cli?.cleanup();
    await server?.stop();
  });

  async function createKey(args: readonly string[]): Promise<CreatedKey> {
    const r = await cli.ok(['create', 'accesskey', ...args, '-o', 'json']);
    return JSON.parse(r.stdout) as CreatedKey;
  }

  describe('login', () => {
    it(
      'adds https:// to a bare host, checks the key, and stores the login readable by the user only',
      TEST,
      async () => {
        const other = cliRunner();
        try {
          const r = await other.ok(['login', host, '--access-key', server.token, '--ca-file', caFile]);
          assert.match(
            r.stdout,
            new RegExp(`Logged in to https://${host.replace(/\./g, '\\.')} as user admin`),
          );
          const file = join(other.home, '.platform', 'config.json');
          assert.equal(statSync(file).mode & 0o777, 0o600);
          assert.equal(
            statSync(join(other.home, '.platform')).mode & 0o077,
            0,
            'the directory is private too',
          );
          const stored = JSON.parse(readFileSync(file, 'utf8')) as {
            login: { server: string; accessKey: string };
          };
          assert.equal(stored.login.server, `https://${host}`);
          assert.equal(stored.login.accessKey, server.token);
          const who = await other.ok(['whoami', '-o', 'json']);
          assert.equal((JSON.parse(who.stdout) as { user: string }).user, 'admin');
        } finally {
          other.cleanup();
        }
      },
    );

    it('refuses plain http without sending anything, and stores nothing', TEST, async () => {
      const other = cliRunner();
      try {
        const r = await other.run(['login', `http://${host}`, '--access-key', server.token]);
        assert.equal(r.code, 2);
        assert.match(oneLineError(r), /refusing plain http/);
        assert.equal(existsSync(join(other.home, '.platform', 'config.json')), false);
      } finally {
        other.cleanup();
      }
    });

    it('says the key is invalid for an unknown key', TEST, async () => {
      const r = await cli.run([
        'login',
        host,
        '--access-key',
        'not-a-key',
        '--ca-file',
        caFile,
        '--config',
        join(cli.home, 'bad.json'),
      ]);
      assert.equal(r.code, 1);
      assert.match(oneLineError(r), /the access key is invalid/);
      assert.equal(existsSync(join(cli.home, 'bad.json')), false);
    });

    it('says the key has expired, and to log in again, for an expired key', TEST, async () => {
      const key = await createKey(['--display-name', 'short-lived', '--ttl', '1s']);
      // Wait until the server counts it expired (a second, plus clock granularity).
      let r;
      const deadline = Date.now() + 30_000;
      do {
        await new Promise((res) => setTimeout(res, 500));
        r = await cli.run([
          'login',
          host,
          '--access-key',
          key.spec.key,
          '--ca-file',
          caFile,
          '--config',
          join(cli.home, 'x.json'),
        ]);
      } while (r.code === 0 && Date.now() < deadline);
      assert.equal(r.code, 1);
      const line = oneLineError(r);
      assert.match(line, /the access key has expired/);
      assert.match(line, /log in again/);
      assert.doesNotMatch(line, /invalid/);
    });

    it('names an unknown certificate authority and how to pass it, or --insecure', TEST, async () => {
      const r = await cli.run([
        'login',
        host,
        '--access-key',
        server.token,
        '--config',
        join(cli.home, 'y.json'),
      ]);
      assert.equal(r.code, 1);
      const line = oneLineError(r);
      assert.match(line, /signed by an unknown authority/);
      assert.match(line, /--ca-file/);
      assert.match(line, /--insecure/);
      const insecure = await cli.run([
        'login',
        host,
        '--access-key',
        server.token,
        '--insecure',
        '--config',
        join(cli.home, 'y.json'),
      ]);
      assert.equal(insecure.code, 0, insecure.stderr);
      assert.match(insecure.stderr, /not verified/);
    });

    it('says when the server cannot be reached', TEST, async () => {
      const r = await cli.run([
        'login',
        '127.0.0.1:1',
        '--access-key',
        server.token,
        '--config',
        join(cli.home, 'z.json'),
      ]);
      assert.equal(r.code, 1);
      assert.match(oneLineError(r), /cannot reach the platform at https:\/\/127\.0\.0\.1:1/);
    });

    it('PLATFORM_CONFIG and --config move the login file', TEST, async () => {
      const path = join(cli.home, 'elsewhere.json');
      await cli.ok(['login', host, '--access-key', server.token, '--ca-file', caFile], {
        env: { PLATFORM_CONFIG: path },
      });
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const who = await cli.ok(['whoami', '--config', path]);
      assert.match(who.stdout, /admin/);
      await cli.ok(['logout', '--config', path]);
      const after = await cli.run(['whoami', '--config', path]);
      assert.equal(after.code, 1);
      assert.match(oneLineError(after), /not logged in/);
    });
  });

  it('--access-key overrides the stored login for one call only', TEST, async () => {
    const user = await server.api('POST', `/apis/${GROUP_VERSION}/users`, {
      apiVersion: GROUP_VERSION,
      kind: 'User',
      metadata: { name: 'bob' },
      spec: { username: 'bob' },
    });
    assert.equal(user.status, 201, user.text);
    const bobKey = await createKey(['--display-name', 'bob cli', '--user', 'bob']);
    assert.equal(bobKey.spec.user, 'bob');
    const asBob = await cli.ok(['whoami', '-o', 'json', '--access-key', bobKey.spec.key]);
    assert.equal((JSON.parse(asBob.stdout) as { user: string }).user, 'bob');
    const asStored = await cli.ok(['whoami', '-o', 'json']);
    assert.equal((JSON.parse(asStored.stdout) as { user: string }).user, 'admin');
    const badOverride = await cli.run(['whoami', '--access-key', 'nope']);
    assert.equal(badOverride.code, 1);
    assert.match(oneLineError(badOverride), /the access key is invalid/);
  });

  describe('Global Secrets', () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

    it('set and get round-trip every byte value exactly, from a file and from stdin', TEST, async () => {
      const file = join(cli.home, 'all-bytes.bin');
      writeFileSync(file, bytes);
      const set = await cli.ok([
        'set',
        'secret',
        'registry',
        '--key',
        'blob',
        '--from-file',
        file,
        '-n',
        'ci',
      ]);
      assert.match(set.stdout, /^Global secret ci\/registry created: key "blob" set \(256 bytes\)\.$/m);
      const blob = await cli.runBinary(['get', 'secret', 'registry', '--key', 'blob', '-n', 'ci']);
      assert.equal(blob.code, 0, blob.stderr);
      assert.deepEqual(blob.stdout, bytes, 'stdout carries exactly the stored bytes, nothing added');

      const reversed = Buffer.from(bytes).reverse();
      const piped = await cli.runBinary(
        ['set', 'secret', 'registry', '--key', 'piped', '--from-file', '-', '-n', 'ci'],
        reversed,
      );
      assert.equal(piped.code, 0, piped.stderr);
      assert.match(piped.stdout.toString(), /updated: key "piped" set/);
      assert.deepEqual(
        (await cli.runBinary(['get', 'secret', 'registry', '--key', 'piped', '-n', 'ci'])).stdout,
        reversed,
      );

      // What the platform holds is the same bytes, as the API shows them (base64).
      const raw = await server.api('GET', `/apis/${GROUP_VERSION}/namespaces/ci/sharedsecrets/registry`);
      const data = (raw.json() as { spec: { data: Record<string, string> } }).spec.data;
      assert.equal(data['blob'], bytes.toString('base64'));
    });

    it('all keys print as YAML (binary as !!binary) or JSON (binary as base64)', TEST, async () => {
      await cli.ok(['set', 'secret', 'registry', '--key', 'password', '--value', 'hunter2 ✓', '-n', 'ci']);
      const password = await cli.ok(['get', 'secret', 'registry', '--key', 'password', '-n', 'ci']);
      assert.equal(password.stdout, 'hunter2 ✓', 'one key prints the value alone');

      const all = await cli.ok(['get', 'secret', 'registry', '-n', 'ci']);
      const doc = parseYaml(all.stdout, { customTags: ['binary'] }) as Record<string, unknown>;
      assert.equal(doc['password'], 'hunter2 ✓');
      assert.deepEqual(Buffer.from(doc['blob'] as Uint8Array), bytes);

      const json = JSON.parse(
        (await cli.ok(['get', 'secret', 'registry', '-n', 'ci', '-o', 'json'])).stdout,
      ) as Record<string, unknown>;
      assert.equal(json['password'], 'hunter2 ✓');
      assert.deepEqual(json['blob'], { base64: bytes.toString('base64') });
    });

    it('a missing secret or key is one clear line', TEST, async () => {
      const missing = await cli.run(['get', 'secret', 'nothing-here', '-n', 'ci']);
      assert.equal(missing.code, 1);
      assert.equal(oneLineError(missing), 'error: global secret "nothing-here" not found in namespace "ci"');
      const noKey = await cli.run(['get', 'secret', 'registry', '--key', 'nope', '-n', 'ci']);
      assert.match(oneLineError(noKey), /has no key "nope" \(its keys: blob, password, piped\)/);
      const both = await cli.run(['set', 'secret', 'x', '--key', 'k']);
      assert.equal(both.code, 2);
      assert.match(oneLineError(both), /exactly one of --value or --from-file/);
    });
  });

  describe('access keys', () => {
    it('create prints the key once; list never shows it; delete revokes it', TEST, async () => {
      const created = await cli.ok(['create', 'accesskey', '--display-name', 'deploy bot', '--ttl', '30d']);
      const name = /Access key "([^"]+)" created for user admin, expires in 30d\./.exec(created.stdout)?.[1];
      const key = /^Key: ([a-z]+)$/m.exec(created.stdout)?.[1];
      assert.ok(name && key, created.stdout);
      assert.match(created.stdout, /only this once/);

      const list = await cli.ok(['list', 'accesskeys']);
      assert.match(list.stdout, /^NAME\s+DISPLAY NAME\s+TYPE\s+SCOPE\s+TTL\s+DISABLED\s+AGE$/m);
      const row = list.stdout.split('\n').find((l) => l.startsWith(`${name} `));
      assert.ok(row, list.stdout);
      assert.match(row, /deploy bot\s+User\s+<none>\s+30d\s+false/);
      assert.ok(!list.stdout.includes(key), 'a listing never shows a key value');
      const listed = JSON.parse((await cli.ok(['list', 'accesskeys', '-o', 'json'])).stdout) as {
        items: Array<{ metadata: { name: string }; spec: { key?: string } }>;
      };
      const item = listed.items.find((i) => i.metadata.name === name);
      assert.ok(item);
      assert.ok(!item.spec.key, 'nor does -o json');

      const who = await cli.ok(['whoami', '--access-key', key]);
      assert.match(who.stdout, /admin/);
      const del = await cli.ok(['delete', 'accesskey', name]);
      assert.equal(del.stdout, `Access key "${name}" deleted.\n`);
      const revoked = await cli.run(['whoami', '--access-key', key]);
      assert.equal(revoked.code, 1);
      assert.match(oneLineError(revoked), /the access key is invalid/);
      const again = await cli.run(['delete', 'accesskey', name]);
      assert.equal(oneLineError(again), `error: access key "${name}" not found`);
    });

    it('--role and --scope-virtual-cluster make a scoped key the platform reports back', TEST, async () => {
      const key = await createKey([
        '--display-name',
        'vc',
        '--role',
        'vcluster',
        '--scope-virtual-cluster',
        'team-a/dev',
      ]);
      const self = JSON.parse(
        (await cli.ok(['whoami', '-o', 'json', '--access-key', key.spec.key])).stdout,
      ) as {
        accessKeyScope: unknown;
      };
      assert.deepEqual(self.accessKeyScope, {
        roles: [{ role: 'vcluster', projects: ['team-a'], virtualClusters: ['dev'] }],
        virtualClusters: [{ project: 'team-a', virtualCluster: 'dev' }],
      });
    });
  });

  it('every failure is one line without a stack trace, and usage errors exit 2', TEST, async () => {
    const unknown = await cli.run(['get', 'secret', 'x', '--no-such-flag']);
    assert.equal(unknown.code, 2);
    assert.match(oneLineError(unknown), /unknown option '--no-such-flag'/);
    const badOutput = await cli.run(['whoami', '-o', 'xml']);
    assert.equal(badOutput.code, 2);
    oneLineError(badOutput);
    const badTtl = await cli.run(['create', 'accesskey', '--display-name', 'x', '--ttl', 'soon']);
    assert.equal(badTtl.code, 2);
    assert.match(oneLineError(badTtl), /--ttl: "soon" is not a duration/);
  });
});
