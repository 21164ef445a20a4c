// Slow and idle clients against the whole server (slowloris): connections that
// trickle their headers are closed by the header timeout and cannot crowd out a
// client that asks properly; an oversized header is refused. Loopback only, bounded
// in connections and time.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';

import { startWithAdmin } from './testing.js';

const TRICKLERS = 200;
const HEADERS_TIMEOUT_MS = 1500;

function get(url: string, ca: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a connection that sends a request line and then one header line every 200 ms, forever. */
function trickle(
  port: number,
): Promise<{ socket: TLSSocket; closed: Promise<{ afterMs: number; answer: string }> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const opened = Date.now();
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const timer = setInterval(() => {
        if (!socket.destroyed) socket.write('X-Slow: still-typing\r\n');
      }, 200);
      const closed = new Promise<{ afterMs: number; answer: string }>((done) =>
        socket.once('close', () => {
          clearInterval(timer);
          done({ afterMs: Date.now() - opened, answer });
        }),
      );
      resolve({ socket, closed });
    });
    socket.once('error', reject);
  });
}

test('connections trickling headers are closed at the header timeout and do not starve others', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slow-clients-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { server, ca } = await startWithAdmin(dataDir, { headersTimeoutMs: HEADERS_TIMEOUT_MS });
  t.after(() => server.stop());

  const slow: Awaited<ReturnType<typeof trickle>>[] = [];
  for (let i = 0; i < TRICKLERS; i++) slow.push(await trickle(server.port));
  t.after(() => slow.forEach((c) => c.socket.destroy()));

  // While they trickle, a client that asks properly is served.
  assert.equal(await get(`${server.url}/readyz`, ca), 200);

  // Every trickler is cut off: at the header timeout, plus Node's 1 s check, with a generous bound.
  const results = await Promise.race([
    Promise.all(slow.map((c) => c.closed)),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('tricklers still open after 20 s')), 20_000),
    ),
  ]);
  for (const r of results) {
    assert.ok(r.afterMs >= HEADERS_TIMEOUT_MS - 100, `closed after ${r.afterMs} ms, before the timeout`);
    assert.ok(r.afterMs < 15_000, `closed only after ${r.afterMs} ms`);
    // Node answers 408 Request Timeout as it closes; never the probe's 200.
    assert.doesNotMatch(r.answer, /200 OK/);
  }

  // A header past the 1 MiB limit is refused (431), as kube-apiserver's MaxHeaderBytes.
  const big = await get(`${server.url}/readyz`, ca, { 'x-big': 'a'.repeat((1 << 20) + 1024) }).catch(
    () => 431,
  );
  assert.equal(big, 431);
});
