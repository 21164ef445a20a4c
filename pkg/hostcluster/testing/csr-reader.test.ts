import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { test } from 'node:test';
import { createCertificateRequest } from '../certificate-request.js';
import { CsrReadError, readCertificateRequest } from './csr-reader.js';
import { generateKey, type KeyType } from './pki.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// A third party's request: the double's reader must agree with OpenSSL, not with the server.
test('reads the subject, SANs and key of a request OpenSSL wrote', { skip: !hasOpenssl() }, () => {
  const pem = execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      '/dev/null',
      '-subj',
      '/O=team-a/O=system:authenticated/CN=alice',
      '-addext',
      'subjectAltName=DNS:a.example,IP:10.0.0.1,IP:2001:db8::1',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const read = readCertificateRequest(pem);
  assert.equal(read.commonName, 'alice');
  assert.deepEqual(read.organizations, ['team-a', 'system:authenticated']);
  assert.deepEqual(read.dnsNames, ['a.example']);
  assert.deepEqual(read.ipAddresses, ['10.0.0.1', '2001:db8::1']);
  assert.equal(read.publicKey.asymmetricKeyType, 'ec');
});

for (const type of ['ec', 'rsa', 'ed25519'] as const satisfies readonly KeyType[]) {
  test(`reads what the server's request writer makes for a ${type} key`, () => {
    const privateKey = generateKey(type);
    const pem = createCertificateRequest({
      privateKey,
      commonName: 'bob',
      organizations: ['devs', 'ops'],
      dnsNames: ['bob.example'],
      ipAddresses: ['192.0.2.7'],
    });
    const read = readCertificateRequest(pem);
    assert.equal(read.commonName, 'bob');
    assert.deepEqual(read.organizations, ['devs', 'ops']);
    assert.deepEqual(read.dnsNames, ['bob.example']);
    assert.deepEqual(read.ipAddresses, ['192.0.2.7']);
    assert.deepEqual(read.publicKeyDer, createPublicKey(privateKey).export({ type: 'spki', format: 'der' }));
  });
}

test('a request whose signature does not verify is refused with Go wording', () => {
  const pem = createCertificateRequest({ privateKey: generateKey('ec'), commonName: 'mallory' });
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s/g, ''), 'base64');
  // Change the CN's last letter: the signed bytes change, the signature does not.
  const at = der.lastIndexOf(Buffer.from('mallory'));
  der[at + 6] = 'z'.charCodeAt(0);
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  assert.throws(() => readCertificateRequest(tampered), {
    name: 'CsrReadError',
    message: 'x509: ECDSA verification failure',
  });
});

test('something that is not one CERTIFICATE REQUEST is refused, never a crash', () => {
  assert.throws(() => readCertificateRequest('hello'), {
    message: 'PEM block type must be CERTIFICATE REQUEST',
  });
  const cert = '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n';
  assert.throws(() => readCertificateRequest(cert), {
    message: 'PEM block type must be CERTIFICATE REQUEST',
  });
  const pem = createCertificateRequest({ privateKey: generateKey('ec'), commonName: 'x' });
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s/g, ''), 'base64');
  for (const bytes of [
    der.subarray(0, der.length - 5),
    Buffer.concat([der, Buffer.from([0])]),
    Buffer.from([0x30, 0x80]),
  ]) {
    const broken = `-----BEGIN CERTIFICATE REQUEST-----\n${bytes.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    assert.throws(() => readCertificateRequest(broken), CsrReadError);
  }
});
