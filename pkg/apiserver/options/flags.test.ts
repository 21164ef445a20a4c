// The command line as commander reads it from the option groups: the forms
// kube-apiserver's flags take, and every problem reported, none thrown.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseFlags, usage } from './flags.js';
import { OPTION_GROUPS } from './server-run-options.js';

test('a value after a known flag is not taken for the value of an unknown flag before it', () => {
  const parsed = parseFlags(['--bogus', '--secure-port', '1', 'stray']);
  assert.deepEqual(parsed.values, { securePort: 1 });
  assert.deepEqual(parsed.problems, [
    'unknown flag: --bogus',
    'unexpected argument "stray": every setting is a --flag',
  ]);
});

test('flags after an unknown one are still read', () => {
  const parsed = parseFlags([
    '--bogus=1',
    '--data-dir=/tmp/x',
    '--watch-cache=false',
    '--etcd-servers',
    'http://e:2379',
  ]);
  assert.deepEqual(parsed.values, { dataDir: '/tmp/x', watchCache: false, etcdServers: ['http://e:2379'] });
  assert.deepEqual(parsed.problems, ['unknown flag: --bogus']);
});

test('a missing value at the end is reported with everything before it', () => {
  const parsed = parseFlags(['--secure-port=x', '--nope', '--log-level']);
  assert.deepEqual(parsed.problems, [
    'unknown flag: --nope',
    '--secure-port: "x" is not a port number (an integer from 0 to 65535)',
    'flag needs an argument: --log-level',
  ]);
});

test('a value that starts with a dash is taken by a flag that needs one, as pflag does', () => {
  assert.deepEqual(parseFlags(['--min-request-timeout', '-5']).values, { minRequestTimeoutSeconds: -5 });
});

test('--help, -h, and --help with a value', () => {
  assert.equal(parseFlags(['-h']).help, true);
  assert.equal(parseFlags(['--secure-port=1', '--help']).help, true);
  assert.deepEqual(parseFlags(['--help=yes']).problems, ['--help takes no value']);
});

test('single-dash long flags keep working as they did', () => {
  assert.deepEqual(parseFlags(['-secure-port=9443', '-log-level', 'debug']).values, {
    securePort: 9443,
    logLevel: 'debug',
  });
});

test("--help lists each flag once, under its group's heading, as kube-apiserver's named flag sets", () => {
  const help = usage();
  const headings = OPTION_GROUPS.map((g) => help.indexOf(`\n${g.title}:\n`));
  assert.ok(
    headings.every((at, i) => at >= 0 && (i === 0 || at > (headings[i - 1] ?? -1))),
    'every group has its heading, in order',
  );
  OPTION_GROUPS.forEach((group, i) => {
    const section = help.slice(headings[i], headings[i + 1] ?? help.indexOf('\nOther flags:'));
    for (const f of group.flags) {
      assert.equal(section.split(`\n  --${f.name} `).length - 1, 1, `--${f.name} under ${group.title}`);
    }
  });
  assert.match(help, /\n {2}--secure-port <int> .*\(default 8443\)\n/);
  assert.match(help, /\n {2}--watch-cache \[bool\] .*\(default true\)\n/);
});
