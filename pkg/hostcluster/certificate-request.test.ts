import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import {
  createCertificateRequest,
  parseCertificateRequest,
  CertificateRequestError,
} from './certificate-request.js';
import { fromPem, toPem } from './der.js';
import { generateKey, newCertificateAuthority, signPublicKey } from './testing/pki.js';
import { OID } from './x509-names.js';

for (const keyType of ['ec', 'rsa', 'ed25519'] as const) {
  test(`a ${keyType} request carries the subject and names and is certified with that key`, () => {
    const privateKey = generateKey(keyType);
    const pem = createCertificateRequest({
      privateKey,
      commonName: 'alice',
      organizations: ['devs', 'ops'],
      dnsNames: ['alice.example.com'],
      ipAddresses: ['10.1.2.3', '::1'],
    });
    const parsed = parseCertificateRequest(pem);
    assert.equal(parsed.commonName, 'alice');
    assert.deepEqual(parsed.organizations, ['devs', 'ops']);
    assert.deepEqual(parsed.dnsNames, ['alice.example.com']);
    assert.deepEqual(parsed.ipAddresses, ['10.1.2.3', '0:0:0:0:0:0:0:1']);

    const ca = newCertificateAuthority('test-ca', { keyType });
    const cert = new X509Certificate(
      signPublicKey(ca, parsed.publicKeyDer, {
        commonName: parsed.commonName,
        extKeyUsage: [OID.clientAuth],
      }),
    );
    assert.ok(cert.verify(ca.cert.publicKey));
    assert.ok(cert.checkPrivateKey(privateKey));
  });
}

test('a tampered request or something that is not a request is refused', () => {
  const pem = createCertificateRequest({ privateKey: generateKey(), commonName: 'alice' });
  const der = fromPem(pem, 'CERTIFICATE REQUEST')[0]!;
  const tampered = Buffer.from(der);
  // Flip a byte inside the subject's "alice".
  const at = tampered.indexOf(Buffer.from('alice'));
  tampered[at] = 'b'.charCodeAt(0);
  assert.throws(
    () => parseCertificateRequest(toPem('CERTIFICATE REQUEST', tampered)),
    CertificateRequestError,
  );
  assert.throws(() => parseCertificateRequest('hello'), /PEM block type must be CERTIFICATE REQUEST/);
  assert.throws(
    () => parseCertificateRequest(toPem('CERTIFICATE REQUEST', Buffer.from([0x30, 0x03, 1]))),
    CertificateRequestError,
  );
});
