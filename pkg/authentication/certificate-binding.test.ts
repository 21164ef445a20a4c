import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';

import { isApiError } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { accessKeyDigest } from './access-key.js';
import { AccessKeyUsability } from './access-key-usability.js';
import { memoryIdentitySource } from './testing/identity-source.js';
import {
  CSR_SIGNER_BACKDATE_MS,
  CertificateBindingAuthenticator,
  certificateBindingGroup,
  parseCertificateBinding,
} from './certificate-binding.js';
import { issueClientCertificate, newCertificateAuthority } from '../hostcluster/testing/index.js';
import type { AuthenticatedUser } from './user/user.js';

const GROUP = 'management.platform.dev';

describe('certificate binding groups', () => {
  it('round-trip, and only this server’s well-formed ones are bindings', () => {
    const full = {
      user: { uid: 'u-1', tokenGeneration: 3 },
      accessKey: { name: 'k', uid: 'k-1', digest: 'd_-x' },
    };
    assert.deepEqual(parseCertificateBinding(GROUP, certificateBindingGroup(GROUP, full)), full);
    const userOnly = { user: { uid: 'u-1', tokenGeneration: 0 } };
    assert.deepEqual(parseCertificateBinding(GROUP, certificateBindingGroup(GROUP, userOnly)), userOnly);
    assert.equal(parseCertificateBinding(GROUP, 'devs'), null);
    assert.equal(parseCertificateBinding('other.example.dev', certificateBindingGroup(GROUP, full)), null);
    for (const bad of ['u-1:x::::', 'u-1:1:k::', '::::', 'u-1:1:k:k-1:d:extra']) {
      assert.equal(parseCertificateBinding(GROUP, `${GROUP}/certificate-binding:${bad}`), 'invalid', bad);
    }
  });
});

describe('CertificateBindingAuthenticator', () => {
  const source = memoryIdentitySource();
  const { users, keys } = source;
  const usability = new AccessKeyUsability(source, {
    generationAnnotation: tokenGenerationAnnotation(GROUP),
    formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
    revisionAnnotation: keyRevisionAnnotation(GROUP),
  });
  const as = (user: AuthenticatedUser, certificates: boolean): CertificateBindingAuthenticator =>
    new CertificateBindingAuthenticator(
      { authenticate: () => user },
      { apiGroup: GROUP, keys: usability, certificates },
    );
  const ca = newCertificateAuthority('binding-unit-ca');
  const HOUR = 3600_000;
  /** A request on a connection that presented a client certificate of bob's made at `notBefore`. */
  const connection = (notBefore: number): IncomingMessage => {
    const cert = issueClientCertificate(ca, 'bob', { notBefore: new Date(notBefore) }).cert;
    const socket = { getPeerCertificate: () => ({ raw: cert.raw, fingerprint256: cert.fingerprint256 }) };
    return { socket, headers: {} } as unknown as IncomingMessage;
  };
  const outcome = async (
    authn: CertificateBindingAuthenticator,
    req = connection(Date.now() - HOUR),
  ): Promise<string> => {
    try {
      const user = await authn.authenticate(req);
      return user ? `${user.name} ${user.groups.join(',')}` : 'none';
    } catch (err) {
      assert.ok(isApiError(err));
      return `${err.code} ${err.message}`;
    }
  };
  const bob = (spec: Record<string, unknown>, metadata: Partial<KubeObject['metadata']> = {}): void => {
    users.set('bob', {
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
      metadata: {
        name: 'bob',
        uid: 'b-1',
        creationTimestamp: new Date(Date.now() - 2 * HOUR).toISOString(),
        ...metadata,
      },
      spec,
    });
  };

  it('refuses a certificate without a binding whose CN is a disabled or revoked platform User', async () => {
    const cert: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'], hostIdentity: true };
    bob({});
    assert.equal(await outcome(as(cert, true)), 'bob system:authenticated');
    bob({ disabled: true });
    assert.match(await outcome(as(cert, true)), /^401 the user "bob" is disabled/);
    bob({ tokenGeneration: 1 });
    assert.match(await outcome(as(cert, true)), /^401 this client certificate was revoked/);
    // Not a platform User: a host identity like any other.
    const admin: AuthenticatedUser = {
      name: 'kubernetes-admin',
      groups: ['system:masters'],
      hostIdentity: true,
    };
    assert.equal(await outcome(as(admin, true)), 'kubernetes-admin system:masters');
    assert.equal(await outcome(as(admin, false)), 'kubernetes-admin system:masters');
  });

  it('refuses a certificate without a binding made before its User was created (a re-created User)', async () => {
    const cert: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'], hostIdentity: true };
    bob({}, { uid: 'b-2', creationTimestamp: new Date(Date.now() - HOUR / 2).toISOString() });
    assert.match(
      await outcome(as(cert, true)),
      /^401 this client certificate was made before the user "bob" was created/,
    );
    // One made after the new bob was: his.
    assert.equal(
      await outcome(as(cert, true), connection(Date.now() - HOUR / 4)),
      'bob system:authenticated',
    );
  });

  it('allows exactly the CSR signer’s 5-minute backdate before the User’s creation, not a second more', async () => {
    const cert: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'], hostIdentity: true };
    // Whole seconds: NotBefore and creationTimestamp both have second precision.
    const created = Math.floor((Date.now() - HOUR) / 1000) * 1000;
    bob({}, { uid: 'b-3', creationTimestamp: new Date(created).toISOString() });
    assert.equal(CSR_SIGNER_BACKDATE_MS, 5 * 60_000);
    // Signed the moment bob was created, backdated by the signer: his.
    assert.equal(
      await outcome(as(cert, true), connection(created - CSR_SIGNER_BACKDATE_MS)),
      'bob system:authenticated',
    );
    assert.match(
      await outcome(as(cert, true), connection(created - CSR_SIGNER_BACKDATE_MS - 1000)),
      /^401 this client certificate was made before the user "bob" was created/,
    );
    // Inside the margin the other checks still hold.
    bob({ tokenGeneration: 1 }, { uid: 'b-3', creationTimestamp: new Date(created).toISOString() });
    assert.match(
      await outcome(as(cert, true), connection(created - 60_000)),
      /^401 this client certificate was revoked/,
    );
  });

  it('answers a prompt 503 with Retry-After, not a 401 or a hang, before the identity cache has loaded', async () => {
    const proxied: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'], hostIdentity: true };
    bob({});
    source.hasSynced = false;
    try {
      for (const certificates of [false, true]) {
        const err = await Promise.resolve(
          as(proxied, certificates).authenticate(connection(Date.now() - HOUR)),
        ).then(
          () => assert.fail('authenticated before the cache loaded'),
          (e: unknown) => e,
        );
        assert.ok(isApiError(err));
        assert.equal(err.code, 503);
        assert.ok((err.details?.retryAfterSeconds ?? 0) >= 1);
      }
    } finally {
      source.hasSynced = true;
    }
  });

  it('refuses an identity from the aggregator without a binding while its platform User is disabled or being deleted', async () => {
    const proxied: AuthenticatedUser = { name: 'bob', groups: ['system:authenticated'], hostIdentity: true };
    bob({});
    assert.equal(await outcome(as(proxied, false)), 'bob system:authenticated');
    bob({ disabled: true });
    assert.match(await outcome(as(proxied, false)), /^401 the user "bob" is disabled/);
    // The generation is a certificate's: a host token forwarded by the aggregator has none.
    bob({ tokenGeneration: 1 });
    assert.equal(await outcome(as(proxied, false)), 'bob system:authenticated');
    bob({}, { deletionTimestamp: new Date().toISOString() });
    for (const certificates of [true, false]) {
      assert.match(await outcome(as(proxied, certificates)), /^401 the user "bob" is being deleted/);
    }
  });

  it('refuses a malformed binding or two of them, on either path', async () => {
    bob({});
    const good = certificateBindingGroup(GROUP, { user: { uid: 'b-1', tokenGeneration: 0 } });
    for (const groups of [[`${GROUP}/certificate-binding:x`], [good, good]]) {
      const user: AuthenticatedUser = { name: 'bob', groups, hostIdentity: true };
      assert.match(await outcome(as(user, false)), /^401 .*invalid platform binding/);
    }
    assert.equal(await outcome(as({ name: 'bob', groups: [good], hostIdentity: true }, false)), 'bob ');
  });

  it('binds to the key’s revision, not to its value: no digest of the value is in a certificate', async () => {
    bob({});
    const REVISION = keyRevisionAnnotation(GROUP);
    const key = (revision?: string): KubeObject => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: {
        name: 'bob-key',
        uid: 'k-1',
        creationTimestamp: new Date().toISOString(),
        ...(revision ? { annotations: { [REVISION]: revision } } : {}),
      },
      spec: { user: 'bob', key: hashAccessKey('short') },
    });
    const digest = (k: KubeObject): string => accessKeyDigest(k, REVISION);
    // The same uid and value under two revisions: two digests, so the digest is no function of the value.
    assert.notEqual(digest(key('r1')), digest(key('r2')));
    // A key stored before keys had a revision keeps the digest its tokens and certificates recorded.
    assert.equal(
      digest(key()),
      createHash('sha256')
        .update(`platform-token-binding\u0000k-1\u0000${hashAccessKey('short')}`)
        .digest('base64url')
        .slice(0, 22),
    );
    const group = certificateBindingGroup(GROUP, {
      user: { uid: 'b-1', tokenGeneration: 0 },
      accessKey: { name: 'bob-key', uid: 'k-1', digest: digest(key('r1')) },
    });
    const cert = as({ name: 'bob', groups: [group], hostIdentity: true }, true);
    keys.set('bob-key', key('r1'));
    assert.equal(await outcome(cert), 'bob ');
    // Disabled: the certificate says so in one sentence, with the key's remedy.
    const disabled = key('r1');
    keys.set('bob-key', { ...disabled, spec: { ...(disabled['spec'] as object), disabled: true } });
    assert.equal(
      await outcome(cert),
      '401 this client certificate no longer works because the access key "bob-key" is disabled; ask an administrator to enable it or use another key',
    );
    // Rotated (the server draws a new revision): the certificate ends.
    keys.set('bob-key', key('r2'));
    assert.match(await outcome(cert), /^401 the access key "bob-key" was rotated/);
    keys.delete('bob-key');
  });

  it('marks a certificate made with an access key tokenDerived (it mints nothing), on either path', async () => {
    bob({});
    const key: KubeObject = {
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: { name: 'bob-key', uid: 'k-1', creationTimestamp: new Date().toISOString() },
      spec: { user: 'bob', key: hashAccessKey('plain-bob-key') },
    };
    keys.set('bob-key', key);
    const keyBound = certificateBindingGroup(GROUP, {
      user: { uid: 'b-1', tokenGeneration: 0 },
      accessKey: { name: 'bob-key', uid: 'k-1', digest: accessKeyDigest(key, keyRevisionAnnotation(GROUP)) },
    });
    const userBound = certificateBindingGroup(GROUP, { user: { uid: 'b-1', tokenGeneration: 0 } });
    for (const certificates of [true, false]) {
      const withKey = await as(
        { name: 'bob', groups: [keyBound], hostIdentity: true },
        certificates,
      ).authenticate({} as IncomingMessage);
      assert.equal(withKey?.tokenDerived, true, `key-bound, certificates: ${certificates}`);
      const userOnly = await as(
        { name: 'bob', groups: [userBound], hostIdentity: true },
        certificates,
      ).authenticate({} as IncomingMessage);
      assert.equal(userOnly?.tokenDerived, undefined, `user-bound, certificates: ${certificates}`);
    }
    keys.delete('bob-key');
  });
});
