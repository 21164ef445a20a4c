// x509 client-certificate authentication, as kube-apiserver's (and its delegated
// extension servers') x509 request authenticator does: a client certificate that
// chains to the client CA, valid now and usable for client auth, authenticates
// as its subject's common name, with its organizations as groups (plus
// system:authenticated). A certificate without a common name authenticates
// nobody.
//
// This is not the front proxy: the request-header CA only makes the
// X-Remote-* headers of the aggregator trusted, while a client-CA certificate is
// the caller's own identity; identity headers beside it mean nothing (the
// front-proxy authenticator, first in the union, strips them). The identities
// are the host cluster's (its CA signs them), so they are host identities: the
// host's SubjectAccessReview is asked about them.
//
// A certificate from another CA is "not mine" (null), not a 401: the same
// connection may carry the front proxy's certificate, or a bearer token may
// follow, as upstream's union of authenticators ignores a failing one when
// another succeeds. The server requests but does not require client certificates.

import type { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { children, decode } from '../hostcluster/der.js';
import { parseName } from '../hostcluster/x509-names.js';
import type { CaBundleSource } from './ca-bundle.js';
import { peerCertificateChain, verifyClientChain } from './front-proxy-x509.js';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';
import type { Logger } from '../util/log/index.js';

const AUTHENTICATED_GROUP = 'system:authenticated';
/** The [0] EXPLICIT version of a TBSCertificate. */
const VERSION_TAG = 0xa0;

/** CN and every O of a certificate's subject, read from its DER (no string escaping to undo). */
export function subjectOf(cert: X509Certificate): { commonName: string; organizations: string[] } {
  const [tbs] = children(decode(cert.raw));
  if (!tbs) return { commonName: '', organizations: [] };
  const fields = children(tbs);
  // version?, serialNumber, signature, issuer, validity, subject
  const subject = fields[(fields[0]?.tag === VERSION_TAG ? 1 : 0) + 4];
  return subject ? parseName(subject) : { commonName: '', organizations: [] };
}

/** CN = user, O = groups; null without a common name or with a subject that cannot be read. */
function identityOf(leaf: X509Certificate): AuthenticatedUser | null {
  let subject: { commonName: string; organizations: string[] };
  try {
    subject = subjectOf(leaf);
  } catch {
    return null;
  }
  if (subject.commonName === '') return null;
  const groups = subject.organizations.filter((o) => o !== '');
  if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  return { name: subject.commonName, groups, hostIdentity: true };
}

export class ClientCertificateAuthenticator implements Authenticator {
  /** A connection's certificate is verified once per CA generation, not once per request. */
  private readonly verified = new WeakMap<
    object,
    { generation: number; expires: number; user: AuthenticatedUser | null }
  >();

  constructor(
    private readonly source: CaBundleSource,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate(req: IncomingMessage): AuthenticatedUser | null {
    const bundle = this.source.current();
    if (!bundle) return null;
    const socket = req.socket as TLSSocket;
    const now = this.now();
    const known = this.verified.get(socket);
    if (known && known.generation === bundle.generation && now <= known.expires) return known.user;
    const chain = peerCertificateChain(socket);
    const leaf = chain[0];
    if (!leaf) {
      // Most connections carry no certificate, and never will: remember that too.
      this.verified.set(socket, { generation: bundle.generation, expires: Infinity, user: null });
      return null;
    }
    const result = verifyClientChain(chain, bundle.roots, now);
    let user: AuthenticatedUser | null = null;
    if (!result.ok) {
      this.logger?.debug('client certificate not accepted', { reason: result.reason });
    } else {
      user = identityOf(leaf);
    }
    // A connection's certificate never changes: the answer holds until the leaf expires or the CA
    // changes; a refusal only for a minute (a certificate not valid yet may become so).
    const expires = Date.parse(leaf.validTo);
    this.verified.set(socket, {
      generation: bundle.generation,
      expires: user ? expires : Math.min(expires, now + 60_000),
      user,
    });
    return user;
  }
}
