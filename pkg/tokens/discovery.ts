// The token issuer's public documents, at the paths Kubernetes uses for its own
// service-account issuer (so tools that know one know the other): the OpenID
// provider configuration at /.well-known/openid-configuration and the key set at
// /openid/v1/jwks. A connected cluster's JWT authenticator reads them once (and
// again when it meets an unknown key id) and then verifies tokens on its own.
// They hold nothing secret and are served without authentication.

import type { SigningAlgorithm } from './signing-key.js';
import type { SigningKeyManager } from './key-manager.js';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/** Public keys change only on rotation, and verifiers refetch on an unknown `kid`: a few minutes of caching is safe. */
const MAX_AGE_SECONDS = 300;

export interface OpenIDConfiguration {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly response_types_supported: readonly string[];
  readonly subject_types_supported: readonly string[];
  readonly id_token_signing_alg_values_supported: readonly string[];
}

export function openIDConfiguration(
  issuer: string,
  jwksUri: string,
  algorithms: readonly SigningAlgorithm[],
): OpenIDConfiguration {
  return {
    issuer,
    jwks_uri: jwksUri,
    // What Kubernetes' service-account issuer announces: its tokens are ID-token-like and subjects public.
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...new Set(algorithms)].sort(),
  };
}

export interface IssuerDocument {
  readonly contentType: string;
  readonly body: unknown;
  readonly maxAgeSeconds: number;
}

export interface IssuerDocumentsOptions {
  /** The issuer, exactly as in the tokens' `iss` (a function when known only once the server listens). */
  readonly issuer: string | (() => string);
  /**
   * Where verifiers fetch the keys. When unset: `<issuer>/openid/v1/jwks`, which
   * this server serves (the issuer is where it serves these documents).
   */
  readonly jwksUri?: string;
}

/** Serves the two documents for the HTTP layer (which strips any path prefix first). */
export class IssuerDocuments {
  constructor(
    private readonly keys: SigningKeyManager,
    private readonly options: IssuerDocumentsOptions,
  ) {}

  /**
   * The document at `path`, or undefined when the path is not one of these. The
   * documents are the same whichever address or path prefix they were fetched at:
   * they name the issuer, and verifiers compare names (`_base`, the URL the
   * request came in at, is not used).
   */
  async document(path: string, _base: string): Promise<IssuerDocument | undefined> {
    if (path === OPENID_CONFIGURATION_PATH) {
      const keys = await this.keys.verificationKeys();
      const issuer = typeof this.options.issuer === 'string' ? this.options.issuer : this.options.issuer();
      const jwksUri = this.options.jwksUri ?? `${issuer.replace(/\/+$/, '')}${JWKS_PATH}`;
      return {
        contentType: 'application/json',
        body: openIDConfiguration(
          issuer,
          jwksUri,
          keys.map((k) => k.alg),
        ),
        maxAgeSeconds: MAX_AGE_SECONDS,
      };
    }
    if (path === JWKS_PATH) {
      return {
        contentType: 'application/jwk-set+json',
        body: await this.keys.jwks(),
        maxAgeSeconds: MAX_AGE_SECONDS,
      };
    }
    return undefined;
  }
}
