// One key that signs (or, once retired, only verifies) direct cluster endpoint
// tokens, and its public half as a JSON Web Key. The key id is the key's RFC 7638
// thumbprint: every replica derives the same `kid` from the same key, and a `kid`
// can never name two different keys.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export const SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** RSA keys below this size are refused: RFC 7518 asks for at least 2048 bits for RS256. */
const MIN_RSA_BITS = 2048;

export interface SigningKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly createdAt: Date;
  /** Set once the key is retired: it verifies tokens until then and signs nothing. */
  readonly verifyUntil?: Date;
}

/** A public key as published in the JWKS. */
export interface PublicJwk {
  readonly kty: string;
  readonly kid: string;
  readonly use: 'sig';
  readonly alg: SigningAlgorithm;
  readonly n?: string;
  readonly e?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
}

export async function generateSigningKey(alg: SigningAlgorithm, createdAt: Date): Promise<SigningKey> {
  const { privateKey } =
    alg === 'RS256'
      ? await generateKeyPairAsync('rsa', { modulusLength: MIN_RSA_BITS, publicExponent: 0x10001 })
      : await generateKeyPairAsync('ec', { namedCurve: 'prime256v1' });
  return signingKeyFrom(privateKey, createdAt);
}

/** The key around a private key; throws for key types and sizes that RS256/ES256 cannot use. */
export function signingKeyFrom(privateKey: KeyObject, createdAt: Date, verifyUntil?: Date): SigningKey {
  const alg = algorithmOf(privateKey);
  const publicKey = createPublicKey(privateKey);
  const key: SigningKey = { kid: thumbprint(publicKey), alg, privateKey, publicKey, createdAt };
  return verifyUntil ? { ...key, verifyUntil } : key;
}

function algorithmOf(privateKey: KeyObject): SigningAlgorithm {
  const details = privateKey.asymmetricKeyDetails ?? {};
  if (privateKey.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < MIN_RSA_BITS) {
      throw new Error(`an RSA signing key needs at least ${MIN_RSA_BITS} bits`);
    }
    return 'RS256';
  }
  if (privateKey.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  throw new Error(
    `unsupported signing key: ${privateKey.asymmetricKeyType ?? 'unknown'} (use RSA for RS256 or EC P-256 for ES256)`,
  );
}

/** RFC 7638: SHA-256 over the required members of the JWK, in lexicographic order, base64url. */
function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  const members =
    jwk.kty === 'RSA'
      ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

export function publicJwk(key: SigningKey): PublicJwk {
  const jwk: JsonWebKey = key.publicKey.export({ format: 'jwk' });
  const base = { kty: String(jwk.kty), kid: key.kid, use: 'sig' as const, alg: key.alg };
  if (key.alg === 'RS256') return { ...base, n: String(jwk.n), e: String(jwk.e) };
  return { ...base, crv: String(jwk.crv), x: String(jwk.x), y: String(jwk.y) };
}

// ---- the stored form --------------------------------------------------------------

/** How a key set is kept (a file in the data dir or a host Secret): JSON, private keys as PKCS#8 PEM. */
export interface StoredKeySet {
  readonly version: 1;
  readonly keys: readonly StoredSigningKey[];
}

export interface StoredSigningKey {
  readonly privateKeyPem: string;
  readonly createdAt: string;
  readonly verifyUntil?: string;
}

export function serializeKeySet(keys: readonly SigningKey[]): string {
  const stored: StoredKeySet = {
    version: 1,
    keys: keys.map((k) => {
      const entry: StoredSigningKey = {
        privateKeyPem: k.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        createdAt: k.createdAt.toISOString(),
      };
      return k.verifyUntil ? { ...entry, verifyUntil: k.verifyUntil.toISOString() } : entry;
    }),
  };
  return `${JSON.stringify(stored, null, 2)}\n`;
}

/** Parses what serializeKeySet wrote; throws with a message naming what is wrong. */
export function parseKeySet(text: string): SigningKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('the signing key set is not valid JSON');
  }
  const record = parsed as Partial<StoredKeySet> | null;
  if (!record || record.version !== 1 || !Array.isArray(record.keys)) {
    throw new Error('the signing key set has an unknown format (expected {"version":1,"keys":[...]})');
  }
  return record.keys.map((entry: Partial<StoredSigningKey>, i) => {
    const createdAt = new Date(entry.createdAt ?? '');
    if (typeof entry.privateKeyPem !== 'string' || Number.isNaN(createdAt.getTime())) {
      throw new Error(`signing key ${i}: needs privateKeyPem and createdAt`);
    }
    const verifyUntil = entry.verifyUntil === undefined ? undefined : new Date(entry.verifyUntil);
    if (verifyUntil && Number.isNaN(verifyUntil.getTime())) {
      throw new Error(`signing key ${i}: verifyUntil is not a time`);
    }
    return signingKeyFrom(createPrivateKey(entry.privateKeyPem), createdAt, verifyUntil);
  });
}
