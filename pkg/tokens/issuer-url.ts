// The token issuer is a URL, not only a name: OpenID discovery (and Kubernetes' JWT
// authenticator, and every OIDC library) fetches `<iss>/.well-known/openid-configuration`
// and requires the `issuer` it finds there to equal the token's `iss`, then fetches
// the keys from its `jwks_uri`. So the `iss` of every token, the discovery
// document's `issuer` and the base of its `jwks_uri` are one value, and that value
// is where this server actually serves the documents.
//
// An operator names it with --token-issuer (the public address connected clusters
// use). Without one, the server names itself the way kube-apiserver derives its
// external address: https://<bind address, or the host name when bound to every
// interface>:<port><path prefix>. The port may be 0 until the server listens, so
// the default is resolved then; nothing issues or verifies a token before that.

import { isIP } from 'node:net';
import { isDNS1123Subdomain } from '../apis/meta/validation.js';

export interface ServingAddress {
  /** --bind-address: used as the host when it is one address, not "every interface". */
  readonly bindAddress: string;
  /** The machine's host name (os.hostname()), used when bound to every interface. */
  readonly hostName: string;
  /** The port the server listens on (the real one, not 0). */
  readonly port: number;
  /** The path prefix the documents are served under, e.g. /kubernetes/management. */
  readonly pathPrefix: string;
}

function isEveryInterface(address: string): boolean {
  return address === '' || address === '0.0.0.0' || address === '::' || /^[0:]+$/.test(address);
}

/** The issuer this server names itself when no --token-issuer is given. */
export function defaultIssuerUrl(address: ServingAddress): string {
  let host: string;
  if (!isEveryInterface(address.bindAddress)) host = address.bindAddress;
  else {
    const name = address.hostName.toLowerCase();
    // The generated serving certificate covers a host name only when it is a DNS name.
    host = isDNS1123Subdomain(name).length === 0 ? name : 'localhost';
  }
  const hostPart = isIP(host) === 6 ? `[${host}]` : host;
  const prefix = address.pathPrefix.replace(/\/+$/, '');
  return `https://${hostPart}:${address.port}${prefix}`;
}

/**
 * The issuer URL of a running server: fixed (--token-issuer), or the default,
 * resolved once the serving address is known.
 */
export class IssuerUrl {
  private value: string | undefined;

  constructor(private readonly fixed?: string) {
    this.value = fixed === undefined || fixed === '' ? undefined : fixed.replace(/\/+$/, '');
  }

  /** True when an operator named the issuer; the serving address does not change it. */
  get isFixed(): boolean {
    return this.fixed !== undefined && this.fixed !== '';
  }

  /** Sets the default from where the server listens (ignored when the issuer is fixed). */
  resolve(address: ServingAddress): void {
    if (!this.isFixed) this.value = defaultIssuerUrl(address);
  }

  /** The issuer; throws when it is not known yet (the server is not listening). */
  get(): string {
    if (this.value === undefined) {
      throw new Error('the token issuer is not known until the server listens');
    }
    return this.value;
  }
}
