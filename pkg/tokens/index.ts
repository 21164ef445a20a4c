// Signed tokens: direct cluster endpoint tokens, the keys that sign them (kept,
// rotated, published as a JWKS) and the issuer's OpenID discovery documents.

export {
  generateSigningKey,
  parseKeySet,
  publicJwk,
  serializeKeySet,
  signingKeyFrom,
  SIGNING_ALGORITHMS,
  type PublicJwk,
  type SigningAlgorithm,
  type SigningKey,
} from './signing-key.js';
export {
  FileKeyStore,
  MemoryKeyStore,
  SecretKeyStore,
  KEY_SET_FILE,
  type SecretAccess,
  type SigningKeyStore,
  type StoredKeys,
} from './key-store.js';
export { SigningKeyManager, type JsonWebKeySet, type KeyManagerOptions } from './key-manager.js';
export {
  looksLikeJwt,
  TokenIssuer,
  TokenVerificationError,
  type EndpointTokenClaims,
  type IssuedToken,
  type IssueRequest,
  type TokenProblem,
} from './token-issuer.js';
export {
  IssuerDocuments,
  JWKS_PATH,
  OPENID_CONFIGURATION_PATH,
  openIDConfiguration,
  type IssuerDocument,
} from './discovery.js';
export { defaultIssuerUrl, IssuerUrl, type ServingAddress } from './issuer-url.js';
export { isUnlimitedScope, scopeExcess } from './scope.js';
