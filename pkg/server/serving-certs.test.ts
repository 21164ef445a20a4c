import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  CA_CERT_FILE,
  CA_KEY_FILE,
  SERVING_CERT_FILE,
  SERVING_KEY_FILE,
  ensureServingCertificates,
  loadServingCertificates,
} from './serving-certs.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'pki-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('generates a CA and a serving certificate covering loopback, the host name and the bind address', (t) => {
  const pki = join(tempDir(t), 'pki');
  const certs = ensureServingCertificates({ pkiDir: pki, bindAddress: '10.1.2.3', hostName: 'box.example' });
  assert.equal(certs.source, 'generated');
  const cert = new X509Certificate(certs.certPem);
  for (const ip of ['127.0.0.1', '::1', '10.1.2.3']) assert.ok(cert.checkIP(ip), `covers ${ip}`);
  for (const host of ['localhost', 'box.example']) assert.ok(cert.checkHost(host), `covers ${host}`);
  const ca = new X509Certificate(certs.caPem ?? '');
  assert.ok(ca.ca);
  assert.ok(cert.verify(ca.publicKey));
  assert.equal(statSync(join(pki, CA_KEY_FILE)).mode & 0o777, 0o600);
  assert.equal(statSync(join(pki, SERVING_KEY_FILE)).mode & 0o777, 0o600);
  assert.equal(statSync(pki).mode & 0o077, 0);
});

test('subject names use only PrintableString characters, which Go clients (kubectl) insist on', (t) => {
  const pki = join(tempDir(t), 'pki');
  const certs = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  for (const pem of [certs.certPem, certs.caPem ?? '']) {
    const cert = new X509Certificate(pem);
    for (const dn of [cert.subject, cert.issuer]) {
      for (const line of dn.split('\n'))
        assert.match(line.replace(/^[A-Z]+=/, ''), /^[A-Za-z0-9 '()+,\-./:=?]+$/, line);
    }
  }
});

test('a later start reuses the files unchanged', (t) => {
  const pki = join(tempDir(t), 'pki');
  const first = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  const second = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  assert.equal(second.source, 'reused');
  assert.equal(second.certPem, first.certPem);
  assert.equal(second.keyPem, first.keyPem);
  assert.equal(second.caPem, first.caPem);
});

test('a new bind address not covered by the SANs renews the serving certificate, keeping the CA', (t) => {
  const pki = join(tempDir(t), 'pki');
  const first = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  const second = ensureServingCertificates({ pkiDir: pki, bindAddress: '192.168.7.9', hostName: 'box' });
  assert.equal(second.source, 'generated');
  assert.equal(second.caPem, first.caPem);
  assert.notEqual(second.certPem, first.certPem);
  assert.ok(new X509Certificate(second.certPem).checkIP('192.168.7.9'));
  // Binding to all interfaces again needs nothing new: loopback is always covered.
  const third = ensureServingCertificates({ pkiDir: pki, bindAddress: '0.0.0.0', hostName: 'box' });
  assert.equal(third.source, 'reused');
});

test('a serving certificate that is not signed by the CA on disk is replaced', (t) => {
  const pki = join(tempDir(t), 'pki');
  ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  rmSync(join(pki, CA_CERT_FILE));
  rmSync(join(pki, CA_KEY_FILE));
  const again = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  assert.equal(again.source, 'generated');
  assert.ok(new X509Certificate(again.certPem).verify(new X509Certificate(again.caPem ?? '').publicKey));
});

test('a TLS client trusting only the generated CA connects over 127.0.0.1 and localhost', async (t) => {
  const pki = join(tempDir(t), 'pki');
  const certs = ensureServingCertificates({ pkiDir: pki, bindAddress: '127.0.0.1', hostName: 'box' });
  const server = createServer({ cert: certs.certPem, key: certs.keyPem }, (_req, res) => res.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  for (const host of ['127.0.0.1', 'localhost']) {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          servername: host === 'localhost' ? host : undefined,
          port,
          ca: certs.caPem,
          agent: false,
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'hello');
  }
});

test('operator files: a self-issued certificate is its own CA; a key that does not match is refused', (t) => {
  const dir = tempDir(t);
  const gen = ensureServingCertificates({
    pkiDir: join(dir, 'pki'),
    bindAddress: '127.0.0.1',
    hostName: 'box',
  });
  // Chain ending in the CA: the CA is known.
  writeFileSync(join(dir, 'chain.crt'), gen.certPem + (gen.caPem ?? ''));
  writeFileSync(join(dir, 'tls.key'), gen.keyPem);
  const withRoot = loadServingCertificates(join(dir, 'chain.crt'), join(dir, 'tls.key'));
  assert.equal(withRoot.caPem?.trim(), gen.caPem?.trim());
  // Leaf only: the issuer is unknown.
  writeFileSync(join(dir, 'leaf.crt'), gen.certPem);
  assert.equal(loadServingCertificates(join(dir, 'leaf.crt'), join(dir, 'tls.key')).caPem, undefined);
  // Wrong key.
  writeFileSync(join(dir, 'wrong.key'), readFileSync(join(dir, 'pki', CA_KEY_FILE)));
  assert.throws(
    () => loadServingCertificates(join(dir, 'leaf.crt'), join(dir, 'wrong.key')),
    /does not match/,
  );
  assert.ok(readFileSync(join(dir, 'pki', SERVING_CERT_FILE), 'utf8').includes('BEGIN CERTIFICATE'));
});
