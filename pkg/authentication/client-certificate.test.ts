import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import {
  issueClientCertificate,
  newCertificateAuthority,
  type IssuedCertificate,
} from '../hostcluster/testing/index.js';
import { compileCaBundle, type CaBundle } from './ca-bundle.js';
import { ClientCertificateAuthenticator, subjectOf } from './client-certificate.js';

/** A request on a connection that presented `cert` (or none); counts certificate reads. */
function requestWith(cert: IssuedCertificate | undefined): { req: IncomingMessage; reads: () => number } {
  let reads = 0;
  const socket = {
    getPeerCertificate: () => {
      reads++;
      return cert ? { raw: cert.cert.raw, fingerprint256: cert.cert.fingerprint256 } : {};
    },
  };
  return { req: { socket, headers: {} } as unknown as IncomingMessage, reads: () => reads };
}

test('subject names are read from the DER: commas, quotes, plus signs and non-ASCII survive', () => {
  const ca = newCertificateAuthority('names-ca');
  const cert = issueClientCertificate(ca, 'jo, "x"+y', { organizations: ['a,b', 'ü=1', 'system:masters'] });
  assert.deepEqual(subjectOf(cert.cert), {
    commonName: 'jo, "x"+y',
    organizations: ['a,b', 'ü=1', 'system:masters'],
  });
});

test('CN is the user, O the groups; a connection is verified once; a new CA retires the old', async () => {
  const oldCa = newCertificateAuthority('old-ca');
  const newCa = newCertificateAuthority('new-ca');
  let bundle: CaBundle = compileCaBundle(oldCa.certPem);
  const authn = new ClientCertificateAuthenticator({ current: () => bundle });

  const alice = requestWith(issueClientCertificate(oldCa, 'alice', { organizations: ['devs'] }));
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await authn.authenticate(alice.req), {
      name: 'alice',
      groups: ['devs', 'system:authenticated'],
      hostIdentity: true,
    });
  }
  assert.equal(alice.reads(), 1);

  const none = requestWith(undefined);
  assert.equal(await authn.authenticate(none.req), null);
  assert.equal(await authn.authenticate(none.req), null);
  assert.equal(none.reads(), 1);

  bundle = compileCaBundle(newCa.certPem);
  assert.equal(await authn.authenticate(alice.req), null);
  const bob = requestWith(issueClientCertificate(newCa, 'bob'));
  assert.equal((await authn.authenticate(bob.req))?.name, 'bob');
});

test('no client CA configured: nobody is authenticated by certificate', async () => {
  const ca = newCertificateAuthority('some-ca');
  const authn = new ClientCertificateAuthenticator({ current: () => undefined });
  assert.equal(await authn.authenticate(requestWith(issueClientCertificate(ca, 'alice')).req), null);
});
