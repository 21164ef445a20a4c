// Plain HTTP here (the kube config says insecure-skip-tls-verify, which client-node requires
// for http); e2e/audit.test.ts sends to an HTTPS receiver with its own CA.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { testEvent } from './testing.js';
import type { EventList } from './types.js';
import { WebhookBackend, loadWebhookTarget } from './webhook.js';

const event = testEvent;

describe('the audit webhook', () => {
  let server: Server;
  let url = '';
  /** Answers these codes in turn, then 200. */
  let answers: number[] = [];
  const received: { body: EventList; auth: string | undefined; type: string | undefined }[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as EventList,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
        });
        res.writeHead(answers.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  async function backend(reported: string[]): Promise<{ hook: WebhookBackend; waits: number[] }> {
    const dir = mkdtempSync(join(tmpdir(), 'audit-webhook-'));
    const config = join(dir, 'webhook.kubeconfig');
    writeFileSync(
      config,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: hook',
        `  cluster: {server: "${url}", insecure-skip-tls-verify: true}`,
        'users:',
        '- name: apiserver',
        '  user: {token: hook-secret}',
        'contexts:',
        '- name: hook',
        '  context: {cluster: hook, user: apiserver}',
        'current-context: hook',
      ].join('\n'),
    );
    const waits: number[] = [];
    const hook = new WebhookBackend(
      await loadWebhookTarget(config),
      {
        initialBackoffMs: 100,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      },
      (plugin, _err, events) => reported.push(`${plugin}:${events.length}`),
    );
    return { hook, waits };
  }

  it("POSTs an EventList with the kube config's credentials", async () => {
    received.length = 0;
    const { hook } = await backend([]);
    assert.equal(await hook.processEvents([event('a'), event('b')]), true);
    assert.equal(received.length, 1);
    assert.equal(received[0]?.auth, 'Bearer hook-secret');
    assert.equal(received[0]?.type, 'application/json');
    assert.equal(received[0]?.body.kind, 'EventList');
    assert.equal(received[0]?.body.apiVersion, 'audit.k8s.io/v1');
    assert.deepEqual(
      received[0]?.body.items.map((e) => e.auditID),
      ['a', 'b'],
    );
  });

  it('retries any failure with a growing backoff, and reports the events when every try failed', async () => {
    received.length = 0;
    answers = [500, 503];
    const reported: string[] = [];
    const retried = await backend(reported);
    assert.equal(await retried.hook.processEvents([event('c')]), true);
    assert.equal(received.length, 3);
    assert.equal(retried.waits.length, 2);
    assert.ok(
      (retried.waits[1] ?? 0) > (retried.waits[0] ?? 0),
      `backoff grows: ${retried.waits.join(', ')}`,
    );
    assert.deepEqual(reported, []);

    received.length = 0;
    answers = [500, 500, 500, 500, 500];
    const failing = await backend(reported);
    assert.equal(await failing.hook.processEvents([event('d')]), false);
    assert.equal(received.length, 5, 'five tries, as upstream');
    assert.deepEqual(reported, ['webhook:1']);
  });
});
