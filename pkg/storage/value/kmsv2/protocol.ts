// The KMS v2 wire formats, described to protobufjs in code (reflection) so nothing
// has to be copied next to the compiled JS:
//   - k8s.io/kms/apis/v2/api.proto: the `v2.KeyManagementService` a plugin serves on
//     its unix socket (Status, Decrypt, Encrypt), field numbers as upstream's;
//   - k8s.io/apiserver .../envelope/kmsv2/v2/api.proto: `EncryptedObject`, the bytes
//     stored after the `k8s:enc:kms:v2:<name>:` prefix, so an etcd operator's tools
//     (and kube-apiserver itself) read what this server writes.
// Both files declare `package v2`; their message names do not collide, so one root
// holds both. The method paths and codecs serve the client and the test plugin alike.

import protobuf from 'protobufjs';

const bytes = (id: number) => ({ type: 'bytes', id });
const string = (id: number) => ({ type: 'string', id });
/** map<string, bytes>: what a plugin attaches to a wrapped DEK. */
const annotations = (id: number) => ({ keyType: 'string', type: 'bytes', id });

// Map fields (keyType) are IMapField, which fromJSON's IField type does not name.
const descriptor = {
  nested: {
    v2: {
      nested: {
        StatusRequest: { fields: {} },
        StatusResponse: {
          fields: { version: string(1), healthz: string(2), keyId: string(3) },
        },
        DecryptRequest: {
          fields: {
            ciphertext: bytes(1),
            uid: string(2),
            keyId: string(3),
            annotations: annotations(4),
          },
        },
        DecryptResponse: { fields: { plaintext: bytes(1) } },
        EncryptRequest: { fields: { plaintext: bytes(1), uid: string(2) } },
        EncryptResponse: {
          fields: {
            ciphertext: bytes(1),
            keyId: string(2),
            annotations: annotations(3),
          },
        },
        EncryptedObject: {
          fields: {
            encryptedData: bytes(1),
            keyID: string(2),
            encryptedDEKSource: bytes(3),
            annotations: annotations(4),
            encryptedDEKSourceType: { type: 'int32', id: 5 },
          },
        },
      },
    },
  },
};
const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);

/** Plugin-provided metadata stored in plain text beside the encrypted DEK source. */
export type Annotations = Readonly<Record<string, Buffer>>;

export interface StatusResponse {
  readonly version: string;
  readonly healthz: string;
  readonly keyId: string;
}
export interface EncryptRequest {
  readonly plaintext: Buffer;
  readonly uid: string;
}
export interface EncryptResponse {
  readonly ciphertext: Buffer;
  readonly keyId: string;
  readonly annotations: Annotations;
}
export interface DecryptRequest {
  readonly ciphertext: Buffer;
  readonly uid: string;
  readonly keyId: string;
  readonly annotations: Annotations;
}
export interface DecryptResponse {
  readonly plaintext: Buffer;
}

/** EncryptedDEKSourceType: what the plaintext of encryptedDEKSource is. */
export const AES_GCM_KEY = 0;
/** The plaintext is a seed; each write derives its own key with HKDF-SHA256 (upstream's default since 1.29). */
export const HKDF_SHA256_XNONCE_AES_GCM_SEED = 1;

export interface EncryptedObject {
  readonly encryptedData: Buffer;
  readonly keyID: string;
  readonly encryptedDEKSource: Buffer;
  readonly annotations: Annotations;
  readonly encryptedDEKSourceType: number;
}

/** Serialises and parses one message type; parse throws on bytes that are not one. */
export interface Codec<T> {
  serialize(value: T): Buffer;
  deserialize(bytes: Buffer): T;
}

function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return Buffer.alloc(0);
}

function annotationsOf(value: unknown): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toBuffer(v);
  }
  return out;
}

function codec<T>(name: string, fromWire: (message: Record<string, unknown>) => T): Codec<T> {
  const type = root.lookupType(`v2.${name}`);
  return {
    serialize: (value) =>
      Buffer.from(type.encode(type.fromObject(value as Record<string, unknown>)).finish()),
    deserialize: (bytes) =>
      fromWire(type.toObject(type.decode(bytes), { defaults: true }) as Record<string, unknown>),
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const statusRequest = codec<Record<string, never>>('StatusRequest', () => ({}));
export const statusResponse = codec<StatusResponse>('StatusResponse', (m) => ({
  version: str(m.version),
  healthz: str(m.healthz),
  keyId: str(m.keyId),
}));
export const encryptRequest = codec<EncryptRequest>('EncryptRequest', (m) => ({
  plaintext: toBuffer(m.plaintext),
  uid: str(m.uid),
}));
export const encryptResponse = codec<EncryptResponse>('EncryptResponse', (m) => ({
  ciphertext: toBuffer(m.ciphertext),
  keyId: str(m.keyId),
  annotations: annotationsOf(m.annotations),
}));
export const decryptRequest = codec<DecryptRequest>('DecryptRequest', (m) => ({
  ciphertext: toBuffer(m.ciphertext),
  uid: str(m.uid),
  keyId: str(m.keyId),
  annotations: annotationsOf(m.annotations),
}));
export const decryptResponse = codec<DecryptResponse>('DecryptResponse', (m) => ({
  plaintext: toBuffer(m.plaintext),
}));
export const encryptedObject = codec<EncryptedObject>('EncryptedObject', (m) => ({
  encryptedData: toBuffer(m.encryptedData),
  keyID: str(m.keyID),
  encryptedDEKSource: toBuffer(m.encryptedDEKSource),
  annotations: annotationsOf(m.annotations),
  encryptedDEKSourceType: typeof m.encryptedDEKSourceType === 'number' ? m.encryptedDEKSourceType : -1,
}));

/** The gRPC service name a KMS v2 plugin registers (package v2, service KeyManagementService). */
export const KMS_SERVICE = 'v2.KeyManagementService';
/** The service's methods: their paths and their request and response codecs. */
export const KMS_METHODS = {
  status: { path: `/${KMS_SERVICE}/Status`, request: statusRequest, response: statusResponse },
  encrypt: { path: `/${KMS_SERVICE}/Encrypt`, request: encryptRequest, response: encryptResponse },
  decrypt: { path: `/${KMS_SERVICE}/Decrypt`, request: decryptRequest, response: decryptResponse },
} as const;
