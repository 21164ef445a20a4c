import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONFIG_ENV, configPath, readConfig, writeConfig } from './config-file.js';
import type { CliConfig } from './config-file.js';
import { CliError } from './errors.js';
import { tempDirPerTest } from './testing/temp-dir.js';

const LOGIN: CliConfig = {
  login: {
    server: 'https://platform.example.com',
    accessKey: 'k'.repeat(64),
    apiGroup: 'management.platform.dev',
    ca: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n',
    user: 'alice',
  },
};

describe('config file', () => {
  const tempDir = tempDirPerTest('platform-config-');

  it('lives at --config, else $PLATFORM_CONFIG, else ~/.platform/config.json', () => {
    assert.equal(configPath(undefined, {}, '/home/u'), '/home/u/.platform/config.json');
    assert.equal(configPath(undefined, { [CONFIG_ENV]: '/env.json' }, '/home/u'), '/env.json');
    assert.equal(configPath('/flag.json', { [CONFIG_ENV]: '/env.json' }, '/home/u'), '/flag.json');
  });

  it('round-trips a login, readable by its owner only, in a 0700 directory it creates', () => {
    const dir = tempDir();
    const path = join(dir, 'nested', '.platform', 'config.json');
    writeConfig(path, LOGIN);
    assert.deepEqual(readConfig(path), LOGIN);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'nested', '.platform')).mode & 0o777, 0o700);
    assert.deepEqual(
      readdirSync(join(dir, 'nested', '.platform')),
      ['config.json'],
      'no temporary file left',
    );
  });

  it('replaces a looser existing file with a 0600 one', () => {
    const dir = tempDir();
    const path = join(dir, 'config.json');
    writeFileSync(path, '{}', { mode: 0o644 });
    writeConfig(path, LOGIN);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readConfig(path).login?.user, 'alice');
  });

  it('logged out: no file, or a file without a login, reads as no login', () => {
    const dir = tempDir();
    assert.deepEqual(readConfig(join(dir, 'missing.json')), {});
    const path = join(dir, 'config.json');
    writeConfig(path, {});
    assert.deepEqual(readConfig(path), {});
    assert.equal(readFileSync(path, 'utf8'), '{}\n');
  });

  it('keeps only the known login fields, and insecure only when true', () => {
    const dir = tempDir();
    const path = join(dir, 'config.json');
    writeFileSync(
      path,
      JSON.stringify({
        login: { server: 's', accessKey: 'k', apiGroup: 'g', insecure: 'yes', extra: 1 },
      }),
    );
    assert.deepEqual(readConfig(path), { login: { server: 's', accessKey: 'k', apiGroup: 'g' } });
  });

  it('says what is wrong with a broken file and how to recover', () => {
    const dir = tempDir();
    const path = join(dir, 'config.json');
    const cases: Array<[string, RegExp]> = [
      ['{not json', /is not valid JSON; fix it or remove it and log in again/],
      ['[1, 2]', /does not hold a JSON object/],
      ['{"login": {"server": "s"}}', /holds an incomplete login; log in again/],
    ];
    for (const [text, pattern] of cases) {
      writeFileSync(path, text);
      assert.throws(
        () => readConfig(path),
        (err: unknown) =>
          err instanceof CliError && err.message.startsWith(path) && pattern.test(err.message),
        text,
      );
    }
  });
});
