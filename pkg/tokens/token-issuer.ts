// Direct cluster endpoint tokens: JWTs signed with the current signing key and
// verifiable by anyone holding the published JWKS. A connected cluster checks the
// signature, issuer, audience and expiry on its own; the platform accepts only
// tokens minted with an access key, and only while that key is still usable (see
// pkg/authentication/endpoint-token.ts).
//
// Claims: iss, sub (the caller), aud, iat, nbf, exp (iat + ttl), jti (unique per
// token), plus `groups` (the caller's groups when the token was issued), `scope`
// (an access-key scope that narrows what the token may do; absent = not narrowed)
// `tokenGeneration` (the User's spec.tokenGeneration at issue time; absent when
// the caller is not a User, e.g. a team's key) and `accessKey` (the name, uid and value
// digest of the OwnedAccessKey the caller authenticated with; absent when the caller used no
// key): the credential the token is derived from, which the platform re-checks on
// every request so that revoking the key revokes the token.

import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';

import type { AccessKeyScope } from '../apis/management/v1/common.js';
import type { SigningKeyManager } from './key-manager.js';

/**
 * The OwnedAccessKey a token was minted with: its name, its uid (a new key of the
 * same name is another key) and a digest of its value at the time (a rotated key
 * is another value; see accessKeyDigest in pkg/authentication/access-key.ts).
 */
export interface AccessKeyClaim {
  readonly name: string;
  readonly uid: string;
  readonly digest: string;
}

export interface EndpointTokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
  readonly iat: number;
  readonly nbf: number;
  readonly exp: number;
  readonly jti: string;
  readonly groups?: readonly string[];
  readonly scope?: AccessKeyScope;
  readonly tokenGeneration?: number;
  readonly accessKey?: AccessKeyClaim;
}

export interface IssueRequest {
  readonly subject: string;
  readonly groups?: readonly string[];
  /** Lifetime in seconds; the caller has checked it against the maximum. */
  readonly ttlSeconds: number;
  readonly scope?: AccessKeyScope;
  readonly tokenGeneration?: number;
  /** The access key the caller authenticated with, if any. */
  readonly accessKey?: AccessKeyClaim;
}

export interface IssuedToken {
  readonly token: string;
  readonly claims: EndpointTokenClaims;
}

/** Why a token did not verify. `foreign` means it is not one of ours at all (another issuer). */
export type TokenProblem = 'malformed' | 'foreign' | 'unknown-key' | 'invalid' | 'expired' | 'not-yet-valid';

export class TokenVerificationError extends Error {
  override readonly name = 'TokenVerificationError';

  constructor(
    readonly problem: TokenProblem,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface TokenIssuerOptions {
  /**
   * The `iss` claim; also the issuer of the OpenID discovery document. A function
   * when it is known only once the server listens (see IssuerUrl).
   */
  readonly issuer: string | (() => string);
  /** The `aud` claim every token carries and verification requires. */
  readonly audience: string;
  readonly now?: () => Date;
}

/** Three base64url parts: what a compact JWS looks like (access keys are 64 letters, no dots). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function looksLikeJwt(token: string): boolean {
  return COMPACT_JWS.test(token);
}

export class TokenIssuer {
  readonly audience: string;
  private readonly issuerOf: () => string;
  private readonly now: () => Date;

  constructor(
    private readonly keys: SigningKeyManager,
    options: TokenIssuerOptions,
  ) {
    const issuer = options.issuer;
    this.issuerOf = typeof issuer === 'string' ? () => issuer : issuer;
    this.audience = options.audience;
    this.now = options.now ?? (() => new Date());
  }

  /** The `iss` of the tokens this issuer signs and accepts. */
  get issuer(): string {
    return this.issuerOf();
  }

  async issue(request: IssueRequest): Promise<IssuedToken> {
    if (!Number.isSafeInteger(request.ttlSeconds) || request.ttlSeconds <= 0) {
      throw new Error(`token lifetime must be a positive number of seconds, not ${request.ttlSeconds}`);
    }
    const key = await this.keys.signingKey();
    const iat = Math.floor(this.now().getTime() / 1000);
    const claims: EndpointTokenClaims = {
      iss: this.issuer,
      sub: request.subject,
      aud: this.audience,
      iat,
      nbf: iat,
      exp: iat + request.ttlSeconds,
      jti: randomUUID(),
      ...(request.groups && request.groups.length > 0 ? { groups: [...request.groups] } : {}),
      ...(request.scope ? { scope: request.scope } : {}),
      ...(request.tokenGeneration !== undefined ? { tokenGeneration: request.tokenGeneration } : {}),
      ...(request.accessKey ? { accessKey: { ...request.accessKey } } : {}),
    };
    const token = jwt.sign({ ...claims }, key.privateKey, {
      algorithm: key.alg,
      keyid: key.kid,
      header: { alg: key.alg, typ: 'JWT', kid: key.kid },
    });
    return { token, claims };
  }

  /**
   * The claims of a token this issuer signed with a key that is still live, or a
   * TokenVerificationError saying what is wrong with it.
   */
  async verify(token: string): Promise<EndpointTokenClaims> {
    if (!looksLikeJwt(token)) throw new TokenVerificationError('malformed', 'the token is not a JWT');
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload !== 'object') {
      throw new TokenVerificationError('malformed', 'the token is not a JWT');
    }
    if (decoded.payload.iss !== this.issuer) {
      throw new TokenVerificationError('foreign', 'the token was issued by someone else');
    }
    const kid = decoded.header.kid;
    const key = typeof kid === 'string' ? await this.keys.keyById(kid) : undefined;
    if (!key) {
      throw new TokenVerificationError(
        'unknown-key',
        'the token was signed with a key that is no longer accepted (it was rotated out)',
      );
    }
    let payload: unknown;
    try {
      payload = jwt.verify(token, key.publicKey, {
        algorithms: [key.alg],
        issuer: this.issuer,
        audience: this.audience,
        clockTimestamp: Math.floor(this.now().getTime() / 1000),
      });
    } catch (err) {
      if (err instanceof jwt.TokenExpiredError) {
        throw new TokenVerificationError('expired', 'the token has expired', { cause: err });
      }
      if (err instanceof jwt.NotBeforeError) {
        throw new TokenVerificationError('not-yet-valid', 'the token is not valid yet', { cause: err });
      }
      throw new TokenVerificationError('invalid', 'the token signature or claims are invalid', {
        cause: err,
      });
    }
    return checkedClaims(payload);
  }
}

/** jsonwebtoken checks exp only when present and sub not at all: a token of ours has both. */
function checkedClaims(payload: unknown): EndpointTokenClaims {
  const p = payload as Partial<Record<keyof EndpointTokenClaims, unknown>>;
  if (
    typeof p.sub !== 'string' ||
    p.sub === '' ||
    typeof p.exp !== 'number' ||
    typeof p.iat !== 'number' ||
    typeof p.jti !== 'string'
  ) {
    throw new TokenVerificationError('invalid', 'the token lacks required claims (sub, iat, exp, jti)');
  }
  if (p.tokenGeneration !== undefined && typeof p.tokenGeneration !== 'number') {
    throw new TokenVerificationError('invalid', 'the token has a malformed tokenGeneration claim');
  }
  if (p.groups !== undefined && !(Array.isArray(p.groups) && p.groups.every((g) => typeof g === 'string'))) {
    throw new TokenVerificationError('invalid', 'the token has a malformed groups claim');
  }
  if (p.accessKey !== undefined && !isAccessKeyClaim(p.accessKey)) {
    throw new TokenVerificationError('invalid', 'the token has a malformed accessKey claim');
  }
  return payload as EndpointTokenClaims;
}

function isAccessKeyClaim(value: unknown): value is AccessKeyClaim {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const claim = value as Record<string, unknown>;
  return ['name', 'uid', 'digest'].every((field) => typeof claim[field] === 'string' && claim[field] !== '');
}
