import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseFlags, usage } from './flags.js';
import { ServerOptions } from './server-run-options.js';

function optionsFrom(argv: string[]): ServerOptions {
  const parsed = parseFlags(argv);
  return new ServerOptions(parsed.values, parsed.problems).complete();
}

const dir = mkdtempSync(join(tmpdir(), 'options-test-'));
const aFile = join(dir, 'present.pem');
writeFileSync(aFile, 'x');
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('defaults are those of the documentation', () => {
  const o = optionsFrom([]);
  assert.deepEqual(o.validate(), []);
  assert.equal(o.values.securePort, 8443);
  assert.equal(o.values.bindAddress, '127.0.0.1');
  assert.equal(o.values.dataDir, resolve('./data'));
  assert.equal(o.values.storageBackend, 'sqlite');
  assert.equal(o.values.etcdPrefix, '/registry');
  assert.equal(o.values.apiGroup, 'management.platform.dev');
  assert.equal(o.values.adminUsername, 'admin');
  assert.equal(o.values.logLevel, 'info');
});

test('both --flag=value and --flag value are understood', () => {
  const o = optionsFrom([
    '--secure-port=0',
    '--bind-address',
    '::1',
    '--storage-backend=etcd3',
    '--etcd-servers',
    'http://127.0.0.1:2379, http://127.0.0.1:22379',
    '--etcd-prefix=/platform/',
    '--api-group',
    'mgmt.example.com',
    '--admin-username=root',
    '--log-level=debug',
  ]);
  assert.deepEqual(o.validate(), []);
  assert.equal(o.values.securePort, 0);
  assert.equal(o.values.bindAddress, '::1');
  assert.deepEqual(o.values.etcdServers, ['http://127.0.0.1:2379', 'http://127.0.0.1:22379']);
  assert.equal(o.values.etcdPrefix, '/platform');
  assert.equal(o.values.apiGroup, 'mgmt.example.com');
  assert.equal(o.values.adminUsername, 'root');
});

const invalid: { argv: string[]; problem: RegExp }[] = [
  { argv: ['--secure-port=70000'], problem: /--secure-port: 70000 is not a port number/ },
  { argv: ['--secure-port=http'], problem: /--secure-port: "http" is not a port number/ },
  { argv: ['--secure-port=-1'], problem: /--secure-port: "-1" is not a port number/ },
  { argv: ['--bind-address=localhost'], problem: /--bind-address: "localhost" is not an IP address/ },
  {
    argv: ['--storage-backend=postgres'],
    problem: /--storage-backend: unknown backend "postgres" \(supported: sqlite, etcd3\)/,
  },
  { argv: ['--storage-backend=etcd3'], problem: /--etcd-servers: required with --storage-backend etcd3/ },
  {
    argv: ['--storage-backend=etcd3', '--etcd-servers=unix://etcd:2379'],
    problem: /--etcd-servers: "unix:\/\/etcd:2379" must use http or https/,
  },
  {
    argv: ['--storage-backend=etcd3', '--etcd-servers=127.0.0.1:2379'],
    problem: /--etcd-servers: "127.0.0.1:2379" is not a URL \(expected scheme:\/\/host:port/,
  },
  {
    argv: ['--storage-backend=etcd3', '--etcd-servers=nope'],
    problem: /--etcd-servers: "nope" is not a URL/,
  },
  {
    argv: [
      '--storage-backend=etcd3',
      '--etcd-servers=https://e:2379',
      `--etcd-cafile=${aFile}`,
      `--etcd-certfile=${aFile}`,
    ],
    problem: /--etcd-certfile and --etcd-keyfile: give both or neither/,
  },
  {
    argv: [
      '--storage-backend=etcd3',
      '--etcd-servers=https://e:2379',
      `--etcd-certfile=${aFile}`,
      `--etcd-keyfile=${aFile}`,
    ],
    problem: /--etcd-certfile: needs --etcd-cafile/,
  },
  {
    argv: [
      '--storage-backend=etcd3',
      '--etcd-servers=https://e:2379',
      `--etcd-cafile=${join(dir, 'missing.pem')}`,
    ],
    problem: /--etcd-cafile: cannot read ".*missing\.pem"/,
  },
  { argv: ['--etcd-prefix=registry'], problem: /--etcd-prefix: "registry" must start with "\/"/ },
  {
    argv: ['--api-group=management'],
    problem: /--api-group: "management" must be a DNS subdomain with at least one dot/,
  },
  {
    argv: ['--api-group=Management.Example.com'],
    problem: /--api-group: "Management.Example.com" must be a DNS subdomain/,
  },
  {
    argv: [`--tls-cert-file=${aFile}`],
    problem: /--tls-cert-file and --tls-private-key-file: give both or neither/,
  },
  {
    argv: [`--tls-private-key-file=${aFile}`],
    problem: /--tls-cert-file and --tls-private-key-file: give both or neither/,
  },
  {
    argv: [`--tls-cert-file=${join(dir, 'nope.crt')}`, `--tls-private-key-file=${aFile}`],
    problem: /--tls-cert-file: cannot read/,
  },
  { argv: [`--data-dir=${aFile}`], problem: /--data-dir: ".*present\.pem" exists and is not a directory/ },
  {
    argv: ['--admin-username=Admin User'],
    problem: /--admin-username: "Admin User" must be a valid user name/,
  },
  {
    argv: [`--client-ca-file=${join(dir, 'no-client-ca.crt')}`],
    problem: /--client-ca-file: cannot read ".*no-client-ca\.crt"/,
  },
  {
    argv: [`--requestheader-client-ca-file=${dir}`],
    problem: /--requestheader-client-ca-file: ".*" is not a file/,
  },
  {
    argv: ['--log-level=chatty'],
    problem: /--log-level: unknown level "chatty" \(supported: debug, info, warn, error\)/,
  },
];

for (const { argv, problem } of invalid) {
  test(`invalid: ${argv.join(' ')}`, () => {
    const problems = optionsFrom(argv).validate();
    assert.ok(
      problems.some((p) => problem.test(p)),
      `expected a problem matching ${String(problem)}, got ${JSON.stringify(problems)}`,
    );
  });
}

test('every problem is reported at once', () => {
  const problems = optionsFrom([
    '--secure-port=99999',
    '--storage-backend=etcd3',
    '--api-group=x',
    '--log-level=loud',
  ]).validate();
  assert.equal(problems.length, 4, JSON.stringify(problems));
});

test('unknown flags, stray arguments and missing values are problems naming the flag, all reported', () => {
  const { problems } = parseFlags([
    '--secure-prot=1',
    'serve',
    '--bogus',
    'x',
    '--secure-port',
    'abc',
    '--data-dir',
  ]);
  assert.deepEqual(problems, [
    'unknown flag: --secure-prot',
    'unexpected argument "serve": every setting is a --flag',
    'unknown flag: --bogus',
    '--secure-port: "abc" is not a port number (an integer from 0 to 65535)',
    'flag needs an argument: --data-dir',
  ]);
  // ...and validate() reports them with the problems of the values.
  const all = optionsFrom(['--bogus', '--storage-backend=etcd3']).validate();
  assert.ok(all.includes('unknown flag: --bogus'), JSON.stringify(all));
  assert.ok(
    all.some((p) => /--etcd-servers/.test(p)),
    JSON.stringify(all),
  );
});

test('a bare boolean flag means true and takes no separate value, as kube-apiserver flags do', () => {
  assert.deepEqual(parseFlags(['--watch-cache']).values, { watchCache: true });
  assert.deepEqual(parseFlags(['--watch-cache=false']).values, { watchCache: false });
  const bare = parseFlags(['--watch-cache', '--secure-port', '0']);
  assert.deepEqual(bare.values, { watchCache: true, securePort: 0 });
  assert.deepEqual(bare.problems, []);
  assert.deepEqual(parseFlags(['--watch-cache=maybe']).problems, [
    '--watch-cache: "maybe" is not a boolean (true or false)',
  ]);
  // The last of a repeated flag wins.
  assert.deepEqual(parseFlags(['--secure-port=1', '--secure-port=2']).values, { securePort: 2 });
});

test('--help is recognised and the usage names every flag with its default', () => {
  assert.equal(parseFlags(['--help']).help, true);
  const text = usage();
  for (const flag of [
    '--secure-port',
    '--bind-address',
    '--data-dir',
    '--storage-backend',
    '--etcd-servers',
    '--etcd-prefix',
    '--etcd-cafile',
    '--etcd-certfile',
    '--etcd-keyfile',
    '--api-group',
    '--tls-cert-file',
    '--tls-private-key-file',
    '--admin-username',
    '--log-level',
  ]) {
    assert.ok(text.includes(flag), flag);
  }
  assert.match(text, /default 8443/);
  assert.match(text, /default management\.platform\.dev/);
});

test('--enable-garbage-collector is unset by default (decided by the host cluster) and takes a boolean', () => {
  assert.equal(optionsFrom([]).values.enableGarbageCollector, undefined);
  assert.equal(optionsFrom(['--enable-garbage-collector=false']).values.enableGarbageCollector, false);
  assert.equal(optionsFrom(['--enable-garbage-collector', 'true']).values.enableGarbageCollector, true);
  assert.ok(
    optionsFrom(['--enable-garbage-collector=maybe'])
      .validate()
      .some((p) => p.includes('--enable-garbage-collector: "maybe" is not a boolean')),
  );
});
