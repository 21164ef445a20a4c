import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from './errors.js';
import { hostOf, normalizePlatformUrl } from './platform-url.js';

describe('normalizePlatformUrl', () => {
  it('adds https:// to a bare host and drops trailing slashes and the management prefix', () => {
    assert.equal(normalizePlatformUrl('platform.example.com'), 'https://platform.example.com');
    assert.equal(normalizePlatformUrl('  platform.example.com:8443/ '), 'https://platform.example.com:8443');
    assert.equal(normalizePlatformUrl('https://platform.example.com/'), 'https://platform.example.com');
    assert.equal(
      normalizePlatformUrl('https://platform.example.com/kubernetes/management/'),
      'https://platform.example.com',
    );
    assert.equal(
      normalizePlatformUrl('HTTPS://Platform.Example.com/base'),
      'https://platform.example.com/base',
    );
    assert.equal(normalizePlatformUrl('127.0.0.1:6443'), 'https://127.0.0.1:6443');
  });

  it('refuses plain http, other schemes, credentials in the URL and empty or broken input', () => {
    const refused = (input: string, pattern: RegExp): void =>
      assert.throws(
        () => normalizePlatformUrl(input),
        (err: unknown) => err instanceof UsageError && pattern.test(err.message),
        input,
      );
    refused('http://platform.example.com', /refusing plain http.*use an https:\/\/ URL/);
    refused('ftp://platform.example.com', /unsupported URL scheme "ftp"/);
    refused('https://me:secret@platform.example.com', /must not carry a user name or password/);
    refused('   ', /the platform URL is empty/);
    refused('https://', /is not a valid URL/);
  });
});

describe('hostOf', () => {
  it('is the URL without its scheme, as the connection secret stores it', () => {
    assert.equal(hostOf('https://platform.example.com:8443'), 'platform.example.com:8443');
    assert.equal(hostOf('https://platform.example.com/base'), 'platform.example.com/base');
  });
});
