import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseApiGroup, DEFAULT_API_GROUP, failureMessage } from './api-client.js';
import type { HttpResponse } from './http.js';

const SERVER = 'https://platform.example.com';

function response(status: number, body: unknown): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, headers: {}, body: Buffer.from(text) };
}

function statusBody(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

describe('failureMessage', () => {
  it('tells an expired key (log in again with a new key) from an unknown one', () => {
    const expired = failureMessage(
      response(401, statusBody(401, 'Unauthorized', 'the access key expired at 2026-01-01T00:00:00Z')),
      SERVER,
    );
    assert.match(expired.message, /^the access key has expired \(the access key expired at 2026/);
    assert.match(expired.message, /platform login https:\/\/platform\.example\.com --access-key <new key>$/);

    const unknown = failureMessage(response(401, statusBody(401, 'Unauthorized', 'Unauthorized')), SERVER);
    assert.match(
      unknown.message,
      /^the access key is invalid: the platform at https:\/\/platform\.example\.com/,
    );
    assert.match(failureMessage(response(401, ''), SERVER).message, /^the access key is invalid/);

    const disabled = failureMessage(
      response(401, statusBody(401, 'Unauthorized', 'the key is disabled')),
      SERVER,
    );
    assert.equal(disabled.message, 'the access key was refused: the key is disabled');
  });

  it("passes the server's Status message and reason on, else the code and the first line of the body", () => {
    assert.deepEqual(
      failureMessage(response(404, statusBody(404, 'NotFound', 'sharedsecrets "x" not found')), SERVER),
      { message: 'sharedsecrets "x" not found', reason: 'NotFound' },
    );
    assert.equal(
      failureMessage(response(502, 'Bad Gateway\n<html>...'), SERVER).message,
      'the platform answered 502: Bad Gateway',
    );
    assert.equal(failureMessage(response(503, ''), SERVER).message, 'the platform answered 503');
  });
});

describe('chooseApiGroup', () => {
  it('takes the only group, else the default among several, else none', () => {
    assert.equal(chooseApiGroup(['management.example.org']), 'management.example.org');
    assert.equal(chooseApiGroup(['other.example.org', DEFAULT_API_GROUP]), DEFAULT_API_GROUP);
    assert.equal(chooseApiGroup(['a.example.org', 'b.example.org']), undefined);
    assert.equal(chooseApiGroup([]), undefined);
  });
});
