// The kubeconfig subresource against the host cluster test double: real HTTPS, a
// real CA signing CertificateSigningRequests, and @kubernetes/client-node both in
// the server (the host client) and reading the kube config that comes back.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthenticationV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';

import { isApiError } from '../../../apis/meta/errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import { accessKeyDigest } from '../../../authentication/access-key.js';
import { AccessKeyUsability } from '../../../authentication/access-key-usability.js';
import { memoryIdentitySource } from '../../../authentication/testing/identity-source.js';
import { compileCaBundle } from '../../../authentication/ca-bundle.js';
import { CertificateBindingAuthenticator } from '../../../authentication/certificate-binding.js';
import { ClientCertificateAuthenticator, subjectOf } from '../../../authentication/client-certificate.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../../../apis/management/v1/owned-access-key.js';
import { KubeHostCluster } from '../../../hostcluster/client.js';
import {
  HostClusterDouble,
  KUBE_APISERVER_CLIENT_SIGNER,
  issueServingCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
} from '../../../hostcluster/testing/index.js';
import type { HostCluster, NewCertificateSigningRequest } from '../../../hostcluster/types.js';
import type { KubeConfig as KubeConfigDocument } from '../../../kubeconfig/types.js';
import { StorageDeadline } from '../../../storage/deadline.js';
import { SqliteKV } from '../../../storage/sqlite/index.js';
import { KVStorage } from '../../../storage/store.js';
import { SigningKeyManager } from '../../../tokens/key-manager.js';
import { MemoryKeyStore } from '../../../tokens/key-store.js';
import { TokenIssuer } from '../../../tokens/token-issuer.js';
import { Store } from '../../generic/store.js';
import type { CreateOptions, RequestContext } from '../../rest/interfaces.js';
import { KubeConfigSubresource, type KubeConfigSubresourceOptions } from './kubeconfig.js';
import { virtualClusterInstanceStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const WRITE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
/** The signer backdates certificates five minutes, as kube-controller-manager does. */
const BACKDATE_SECONDS = 300;

const alice: AuthenticatedUser = { name: 'alice', groups: ['dev', 'system:authenticated'] };

function ctx(user: AuthenticatedUser = alice): RequestContext {
  return { user, namespace: 'p-web', warnings: [] };
}

function request(spec: Record<string, unknown>): unknown {
  return { apiVersion: `${GROUP}/v1`, kind: 'VirtualClusterInstanceKubeConfig', spec };
}

/** A HostCluster that records the CSRs filed and can stand in for an approver that denies. */
class RecordingHost implements HostCluster {
  readonly filed: NewCertificateSigningRequest[] = [];
  denyOnApprove = false;

  constructor(
    private readonly inner: HostCluster,
    private readonly double: HostClusterDouble,
  ) {}

  get server(): string {
    return this.inner.server;
  }
  tokenReview: HostCluster['tokenReview'] = (...a) => this.inner.tokenReview(...a);
  subjectAccessReview: HostCluster['subjectAccessReview'] = (...a) => this.inner.subjectAccessReview(...a);
  getConfigMap: HostCluster['getConfigMap'] = (...a) => this.inner.getConfigMap(...a);
  watchConfigMap: HostCluster['watchConfigMap'] = (...a) => this.inner.watchConfigMap(...a);
  getSecret: HostCluster['getSecret'] = (...a) => this.inner.getSecret(...a);
  createSecret: HostCluster['createSecret'] = (...a) => this.inner.createSecret(...a);
  updateSecret: HostCluster['updateSecret'] = (...a) => this.inner.updateSecret(...a);
  getCertificateSigningRequest: HostCluster['getCertificateSigningRequest'] = (...a) =>
    this.inner.getCertificateSigningRequest(...a);
  watchCertificateSigningRequest: HostCluster['watchCertificateSigningRequest'] = (...a) =>
    this.inner.watchCertificateSigningRequest(...a);
  deleteCertificateSigningRequest: HostCluster['deleteCertificateSigningRequest'] = (...a) =>
    this.inner.deleteCertificateSigningRequest(...a);
  createCertificateSigningRequest: HostCluster['createCertificateSigningRequest'] = (csr, options) => {
    this.filed.push(csr);
    return this.inner.createCertificateSigningRequest(csr, options);
  };
  approveCertificateSigningRequest: HostCluster['approveCertificateSigningRequest'] = async (
    name,
    ...rest
  ) => {
    if (!this.denyOnApprove) return this.inner.approveCertificateSigningRequest(name, ...rest);
    // An administrator (or policy) got there first.
    this.double.denyCertificateSigningRequest(
      name,
      'PolicyDenied',
      'client certificates are not allowed here',
    );
    const csr = await this.inner.getCertificateSigningRequest(name);
    assert.ok(csr);
    return csr;
  };
}

function hostFor(double: HostClusterDouble): HostCluster {
  const kc = new KubeConfig();
  kc.loadFromString(double.kubeconfig());
  return new KubeHostCluster(kc);
}

async function failure(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return { code: err.code, reason: err.reason, message: err.message };
  }
  assert.fail('expected the request to fail');
}

function kubeConfigOf(obj: KubeObject): KubeConfigDocument {
  const status = obj['status'];
  assert.ok(isObject(status) && typeof status['kubeConfig'] === 'string', 'status.kubeConfig');
  return parse(status['kubeConfig']) as KubeConfigDocument;
}

function userCertificate(doc: KubeConfigDocument): X509Certificate {
  const data = doc.users[0]?.user['client-certificate-data'];
  assert.ok(data, 'client-certificate-data');
  return new X509Certificate(Buffer.from(data, 'base64'));
}

function lifetimeSeconds(cert: X509Certificate): number {
  return (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000;
}

describe('virtualclusterinstances/kubeconfig', { timeout: 120_000 }, () => {
  let double: HostClusterDouble;
  let host: RecordingHost;
  let storage: KVStorage;
  let instances: Store;
  let issuer: TokenIssuer;
  let vcCa: CertificateAuthority;

  const subresource = (overrides: Partial<KubeConfigSubresourceOptions> = {}): KubeConfigSubresource =>
    new KubeConfigSubresource({
      group: GROUP,
      instances,
      host,
      tokens: { issuer, users: { user: () => undefined } },
      maxTokenTtlSeconds: 86400,
      signerName: KUBE_APISERVER_CLIENT_SIGNER,
      csrTimeoutMs: 10_000,
      ingressSuffix: 'vc.example.com',
      projectNamespacePrefix: 'p-',
      compileSchema,
      ...overrides,
    });

  before(async () => {
    double = await HostClusterDouble.start();
    host = new RecordingHost(hostFor(double), double);
    vcCa = newCertificateAuthority('vcluster-dev-ca');
    await host.createSecret({
      metadata: { name: 'dev-certs', namespace: 'vc-dev' },
      data: { 'ca.crt': Buffer.from(vcCa.certPem) },
    });
    // "real": a virtual cluster the test double stands in for, so its kube config can be used.
    await host.createSecret({
      metadata: { name: 'vc-real', namespace: 'vc-real' },
      data: { 'certificate-authority': Buffer.from(double.serverCa.certPem) },
    });
    storage = new KVStorage(SqliteKV.open(':memory:'));
    instances = new Store({
      strategy: virtualClusterInstanceStrategy(GROUP, { projectNamespacePrefix: 'p-' }),
      storage,
      keyPrefix: '/registry',
      compileSchema,
    });
    const create = (name: string, spec: Record<string, unknown>): Promise<KubeObject> =>
      instances.create(ctx(), { metadata: { name }, spec }, WRITE);
    const ingressOn = { accessPoint: { ingress: { enabled: true } } };
    await create('dev', { clusterRef: { namespace: 'vc-dev', virtualCluster: 'dev' }, template: ingressOn });
    await create('real', { clusterRef: { namespace: 'vc-real' } });
    await create('closed', { clusterRef: { namespace: 'vc-dev', virtualCluster: 'dev' } });
    const keys = new SigningKeyManager({
      store: new MemoryKeyStore(),
      rotationPeriodMs: 0,
      gracePeriodMs: 0,
    });
    await keys.init();
    issuer = new TokenIssuer(keys, { issuer: 'https://platform.test', audience: GROUP });
  });

  after(async () => {
    await double.stop();
    await storage.close();
  });

  beforeEach(() => {
    host.filed.length = 0;
    host.denyOnApprove = false;
    double.setSignerBehaviour(KUBE_APISERVER_CLIENT_SIGNER, 'sign');
  });

  it("reads the caller's User for a certificate's binding under the request's deadline", async () => {
    // The binding's read of the caller's User is this request's storage work: it must be
    // bounded by (and refused after) the request's own deadline like every other read.
    const deadline = new StorageDeadline(Date.now() + 30_000);
    const seen: (StorageDeadline | undefined)[] = [];
    await subresource({
      tokens: {
        issuer,
        users: {
          user: (_name, d) => {
            seen.push(d);
            return undefined;
          },
        },
      },
    }).create({ ...ctx(), deadline }, 'dev', request({ clientCert: true, certificateTTL: 3600 }), WRITE);
    assert.deepEqual(seen, [deadline]);
  });

  it('issues a client certificate that chains to the host CA, for the caller, living exactly as asked', async () => {
    const created = await subresource().create(
      ctx(),
      'dev',
      request({ clientCert: true, certificateTTL: 3600 }),
      WRITE,
    );
    assert.equal(created['kind'], 'VirtualClusterInstanceKubeConfig');
    const doc = kubeConfigOf(created);
    assert.equal(doc.clusters[0]?.cluster.server, 'https://dev-web.vc.example.com');
    assert.equal(
      Buffer.from(doc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
      vcCa.certPem,
    );
    const cert = userCertificate(doc);
    assert.ok(cert.verify(new X509Certificate(double.clientCa.certPem).publicKey), 'signed by the host CA');
    assert.ok(cert.checkIssued(new X509Certificate(double.clientCa.certPem)));
    assert.deepEqual(cert.keyUsage, [CLIENT_AUTH]);
    assert.match(cert.subject, /CN=alice/);
    assert.match(cert.subject, /O=dev/);
    assert.doesNotMatch(cert.subject, /system:/);
    assert.equal(lifetimeSeconds(cert), 3600 + BACKDATE_SECONDS);
    assert.equal(host.filed[0]?.expirationSeconds, 3600);
    assert.equal(host.filed[0]?.signerName, KUBE_APISERVER_CLIENT_SIGNER);
    assert.ok(host.filed[0]?.usages.includes('client auth'));
    assert.deepEqual(double.certificateSigningRequests(), [], 'no CSR left behind');
  });

  it('asks for one day when certificateTTL is omitted, and for no duration at all when it is 0', async () => {
    const oneDay = await subresource().create(ctx(), 'dev', request({ clientCert: true }), WRITE);
    assert.equal(host.filed[0]?.expirationSeconds, 86400);
    assert.equal(lifetimeSeconds(userCertificate(kubeConfigOf(oneDay))), 86400 + BACKDATE_SECONDS);

    const signerDefault = await subresource().create(
      ctx(),
      'dev',
      request({ clientCert: true, certificateTTL: 0 }),
      WRITE,
    );
    assert.ok(
      host.filed[1] && !('expirationSeconds' in host.filed[1]),
      'no expirationSeconds in the request',
    );
    // The double's signer then uses its default, a year (capped by its CA's own expiry, a little sooner).
    const lifetime = lifetimeSeconds(userCertificate(kubeConfigOf(signerDefault)));
    assert.ok(lifetime > 364 * 86400 && lifetime <= 365 * 86400 + BACKDATE_SECONDS, String(lifetime));
  });

  it('returns a kube config that client-node loads and that authenticates against the host', async () => {
    const created = await subresource().create(
      ctx(),
      'real',
      request({ clientCert: true, server: double.url }),
      WRITE,
    );
    const status = created['status'] as { kubeConfig: string };
    const kc = new KubeConfig();
    kc.loadFromString(status.kubeConfig);
    assert.equal(kc.getCurrentCluster()?.server, double.url);
    const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    assert.equal(review.status?.userInfo?.username, 'alice');
    assert.ok(review.status?.userInfo?.groups?.includes('dev'));
  });

  it('says which: a denied request, a failed signer, a signer that never answers — and leaves no CSR', async () => {
    host.denyOnApprove = true;
    const denied = await failure(subresource().create(ctx(), 'dev', request({ clientCert: true }), WRITE));
    assert.equal(denied.code, 403);
    assert.match(
      denied.message,
      /host cluster denied the client certificate.*PolicyDenied: client certificates are not allowed here/,
    );
    assert.deepEqual(double.certificateSigningRequests(), []);
    host.denyOnApprove = false;

    double.setSignerBehaviour(KUBE_APISERVER_CLIENT_SIGNER, 'fail');
    const failed = await failure(subresource().create(ctx(), 'dev', request({ clientCert: true }), WRITE));
    assert.equal(failed.code, 500);
    assert.match(failed.message, /signer failed to issue the client certificate/);
    assert.deepEqual(double.certificateSigningRequests(), []);

    double.setSignerBehaviour(KUBE_APISERVER_CLIENT_SIGNER, 'ignore');
    const timedOut = await failure(
      subresource({ csrTimeoutMs: 300 }).create(ctx(), 'dev', request({ clientCert: true }), WRITE),
    );
    assert.equal(timedOut.code, 504);
    assert.equal(timedOut.reason, 'Timeout');
    assert.match(timedOut.message, /did not issue a certificate .* within/);
    assert.match(timedOut.message, /--csr-signer-name/);
    assert.deepEqual(double.certificateSigningRequests(), []);
  });

  it('says so when the host cannot be reached, and when none is configured', async () => {
    const gone = await HostClusterDouble.start();
    const unreachable = hostFor(gone);
    await gone.stop();
    const err = await failure(
      subresource({ host: unreachable }).create(ctx(), 'dev', request({ clientCert: true }), WRITE),
    );
    assert.equal(err.code, 503);
    assert.match(err.message, /host cluster at https:\/\/127\.0\.0\.1:\d+: it cannot be reached/);

    const none = await failure(subresource({ host: undefined }).create(ctx(), 'dev', request({}), WRITE));
    assert.equal(none.code, 503);
    assert.match(none.message, /no host cluster is configured.*--host-kubeconfig/);
  });

  it('puts a platform token for this virtual cluster, owned by the caller, in the kube config without clientCert', async () => {
    const created = await subresource().create(ctx(), 'dev', request({ certificateTTL: 1800 }), WRITE);
    const token = kubeConfigOf(created).users[0]?.user.token;
    assert.ok(token);
    const claims = await issuer.verify(token);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.exp - claims.iat, 1800);
    assert.deepEqual(claims.scope, { virtualClusters: [{ project: 'web', virtualCluster: 'dev' }] });
    assert.deepEqual(host.filed, [], 'no CSR for a token');

    const capped = ctx();
    const long = await subresource({ maxTokenTtlSeconds: 600 }).create(capped, 'dev', request({}), WRITE);
    const longClaims = await issuer.verify(kubeConfigOf(long).users[0]?.user.token ?? '');
    assert.equal(longClaims.exp - longClaims.iat, 600);
    assert.match(capped.warnings[0] ?? '', /lives 600 seconds/);
  });

  it('refuses a token outside the caller’s own scope, and certificates for scoped credentials', async () => {
    const scoped: AuthenticatedUser = { ...alice, scope: { projects: [{ project: 'other' }] } };
    const err = await failure(subresource().create(ctx(scoped), 'dev', request({}), WRITE));
    assert.equal(err.code, 403);
    const inProject: AuthenticatedUser = { ...alice, scope: { projects: [{ project: 'web' }] } };
    assert.ok(kubeConfigOf(await subresource().create(ctx(inProject), 'dev', request({}), WRITE)));
    const cert = await failure(
      subresource().create(ctx(inProject), 'dev', request({ clientCert: true }), WRITE),
    );
    assert.equal(cert.code, 403);
    assert.match(cert.message, /client certificate cannot carry a scope/);
  });

  it('needs an ingress access point or a server, and an existing instance', async () => {
    const closed = await failure(subresource().create(ctx(), 'closed', request({}), WRITE));
    assert.equal(closed.code, 400);
    assert.match(
      closed.message,
      /has no ingress access point.*spec\.template\.accessPoint\.ingress\.enabled: true/,
    );
    const given = await subresource().create(
      ctx(),
      'closed',
      request({ server: 'https://dev.example.org' }),
      WRITE,
    );
    assert.equal(kubeConfigOf(given).clusters[0]?.cluster.server, 'https://dev.example.org');

    const noSuffix = await failure(
      subresource({ ingressSuffix: '' }).create(ctx(), 'dev', request({}), WRITE),
    );
    assert.equal(noSuffix.code, 400);
    assert.match(noSuffix.message, /--ingress-suffix/);

    const missing = await failure(subresource().create(ctx(), 'nope', request({}), WRITE));
    assert.equal(missing.code, 404);
    assert.equal(missing.message, `virtualclusterinstances.${GROUP} "nope" not found`);
  });

  it('refuses a negative certificateTTL, and signs nothing on a dry run', async () => {
    const negative = await failure(
      subresource().create(ctx(), 'dev', request({ certificateTTL: -1 }), WRITE),
    );
    assert.equal(negative.code, 422);
    assert.match(
      negative.message,
      /spec\.certificateTTL: Invalid value: -1: must be greater than or equal to 0/,
    );

    const dry = await subresource().create(ctx(), 'dev', request({ clientCert: true }), {
      ...WRITE,
      dryRun: true,
    });
    assert.deepEqual(dry['status'], {});
    assert.deepEqual(host.filed, []);
  });

  it('binds the certificate to the caller’s User and key: this server refuses it once either stops working', async () => {
    const source = memoryIdentitySource();
    const { users, keys } = source;
    const setUser = (uid: string, spec: Record<string, unknown> = {}): void => {
      users.set('alice', { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name: 'alice', uid }, spec });
    };
    const setKey = (spec: Record<string, unknown> = {}): KubeObject => {
      const key: KubeObject = {
        apiVersion: `${GROUP}/v1`,
        kind: 'OwnedAccessKey',
        metadata: { name: 'alice-key', uid: 'key-uid', creationTimestamp: new Date().toISOString() },
        spec: { user: 'alice', key: hashAccessKey('plain-alice-key'), ...spec },
      };
      keys.set('alice-key', key);
      return key;
    };
    setUser('alice-uid');
    const key = setKey();
    const caller: AuthenticatedUser = {
      ...alice,
      accessKeyName: 'alice-key',
      accessKeyUid: 'key-uid',
      accessKeyDigest: accessKeyDigest(key, keyRevisionAnnotation(GROUP)),
    };
    const created = await subresource({
      tokens: { issuer, users: { user: (name) => users.get(name) } },
    }).create(
      ctx(caller),
      'real',
      request({ clientCert: true, certificateTTL: 0, server: double.url }),
      WRITE,
    );
    const status = created['status'] as { kubeConfig: string };
    const kc = new KubeConfig();
    kc.loadFromString(status.kubeConfig);
    const kcUser = kc.getCurrentUser();
    assert.ok(kcUser?.certData && kcUser.keyData);

    // This server's x509 authenticator, and the aggregator's front proxy forwarding the same identity.
    const usability = new AccessKeyUsability(source, {
      generationAnnotation: tokenGenerationAnnotation(GROUP),
      formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
      revisionAnnotation: keyRevisionAnnotation(GROUP),
    });
    const x509 = new CertificateBindingAuthenticator(
      new ClientCertificateAuthenticator({ current: () => compileCaBundle(double.clientCa.certPem) }),
      { apiGroup: GROUP, keys: usability, certificates: true },
    );
    const server = await listenTls(async (req) => x509.authenticate(req));
    const frontProxied = new CertificateBindingAuthenticator(
      { authenticate: () => hostIdentityOf(Buffer.from(kcUser.certData ?? '', 'base64')) },
      { apiGroup: GROUP, keys: usability, certificates: false },
    );
    const both = async (): Promise<string[]> => [
      await server.call(kcUser.certData ?? '', kcUser.keyData ?? ''),
      await outcome(() => frontProxied.authenticate({} as IncomingMessage)),
    ];
    try {
      // Works while everything does, as alice with her groups (the binding itself is no group of hers),
      // minting nothing: what it minted would outlive the key.
      const works = 'alice dev,system:authenticated tokenDerived';
      assert.deepEqual(await both(), [works, works]);

      setUser('alice-uid', { disabled: true });
      for (const r of await both()) assert.match(r, /^401 the user "alice" is disabled/);
      setUser('alice-uid', { tokenGeneration: 1 });
      for (const r of await both()) assert.match(r, /^401 this client certificate was revoked/);
      setUser('alice-uid');
      setKey({ disabled: true });
      for (const r of await both()) assert.match(r, /^401 .*access key "alice-key" is disabled/);
      setKey({ key: hashAccessKey('rotated') });
      for (const r of await both()) assert.match(r, /^401 the access key "alice-key" was rotated/);
      keys.delete('alice-key');
      for (const r of await both()) assert.match(r, /^401 the access key "alice-key" .* no longer exists/);
      setKey();
      assert.deepEqual(await both(), [works, works]);
      // Deleted, then re-created under the same name: the new alice is not the one it was made for.
      users.delete('alice');
      for (const r of await both())
        assert.match(r, /^401 the user "alice" this client certificate was made for no longer exists/);
      setUser('another-uid');
      for (const r of await both())
        assert.match(r, /^401 the user "alice" this client certificate was made for no longer exists/);
    } finally {
      await server.close();
    }
  });
});

/** The identity the host's aggregator forwards for a certificate: its CN and O. */
function hostIdentityOf(der: Buffer): AuthenticatedUser {
  const { commonName, organizations } = subjectOf(new X509Certificate(der));
  return { name: commonName, groups: [...organizations, 'system:authenticated'], hostIdentity: true };
}

/** "<name> <groups>" of an authenticated caller, or "<code> <message>" of a refusal. */
async function outcome(authenticate: () => unknown): Promise<string> {
  try {
    const user = (await authenticate()) as AuthenticatedUser | null;
    // tokenDerived: the identity mints no credential (a kube config, a key, a token).
    return user
      ? `${user.name} ${user.groups.join(',')}${user.tokenDerived ? ' tokenDerived' : ''}`
      : 'anonymous';
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return `${err.code} ${err.message}`;
  }
}

/** A TLS server asking for client certificates (as this server does), answering with outcome(). */
async function listenTls(
  authenticate: (req: IncomingMessage) => Promise<unknown>,
): Promise<{ call(certB64: string, keyB64: string): Promise<string>; close(): Promise<void> }> {
  const ca = newCertificateAuthority('binding-test-serving-ca');
  const serving = issueServingCertificate(ca, { ipAddresses: ['127.0.0.1'] });
  const server = createHttpsServer(
    { cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      void outcome(() => authenticate(req)).then((text) => res.end(text));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    call: (certB64, keyB64) =>
      new Promise<string>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/',
            ca: ca.certPem,
            cert: Buffer.from(certB64, 'base64'),
            key: Buffer.from(keyB64, 'base64'),
            agent: false,
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve(body));
          },
        );
        req.on('error', reject);
        req.end();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
