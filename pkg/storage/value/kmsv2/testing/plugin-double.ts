// A KMS v2 plugin for tests: a real gRPC server on a unix socket that serves
// `v2.KeyManagementService` with real AES-256-GCM under its own keys (one per key
// id, never the server's code), so a test sees what an operator's plugin does. It
// counts its calls, rotates its key id (old key ids still decrypt, as a cloud KMS
// keeps old key versions), goes down and comes back on the same socket.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import {
  Server,
  ServerCredentials,
  status as grpcStatus,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Codec, DecryptRequest, DecryptResponse, EncryptRequest, EncryptResponse, StatusResponse } from '../protocol.js';
import { KMS_METHODS } from '../protocol.js';

/** The annotation the double stores with each wrapped DEK (checked on Decrypt). */
export const DOUBLE_ANNOTATION = 'version.kms.double.example.com';

export interface PluginCalls {
  status: number;
  encrypt: number;
  decrypt: number;
}

function method<Req, Res>({ path, request, response }: { path: string; request: Codec<Req>; response: Codec<Res> }) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: request.serialize,
    requestDeserialize: request.deserialize,
    responseSerialize: response.serialize,
    responseDeserialize: response.deserialize,
  };
}

const SERVICE: ServiceDefinition = {
  Status: method(KMS_METHODS.status),
  Encrypt: method(KMS_METHODS.encrypt),
  Decrypt: method(KMS_METHODS.decrypt),
};

type Fail = { code: number; details: string };

export class KMSPluginDouble {
  readonly calls: PluginCalls = { status: 0, encrypt: 0, decrypt: 0 };
  private readonly keys = new Map<string, Buffer>();
  private server: Server | undefined;
  private generation = 1;
  /** What Status says for healthz (anything but "ok" fails the server's health check). */
  healthz = 'ok';
  /** When set, the key id Encrypt reports instead of the current one (a plugin whose Status and Encrypt disagree). */
  encryptKeyId: string | undefined;

  private constructor(readonly socketPath: string) {
    this.keys.set(this.keyId, randomBytes(32));
  }

  /** Starts a plugin listening on `socketPath`. */
  static async start(socketPath: string): Promise<KMSPluginDouble> {
    const plugin = new KMSPluginDouble(socketPath);
    await plugin.up();
    return plugin;
  }

  /** The key id Status and Encrypt report now. */
  get keyId(): string {
    return `double-key-${this.generation}`;
  }

  /** The endpoint to put in an EncryptionConfiguration. */
  get endpoint(): string {
    return `unix://${this.socketPath}`;
  }

  /** A new key, reported from now on; the old ones keep decrypting. */
  rotate(): string {
    this.generation++;
    this.keys.set(this.keyId, randomBytes(32));
    return this.keyId;
  }

  /** Forgets every key but the current one (values wrapped with them no longer decrypt). */
  forgetOldKeys(): void {
    for (const id of [...this.keys.keys()]) if (id !== this.keyId) this.keys.delete(id);
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Listens (again) on the socket. */
  async up(): Promise<void> {
    if (this.server) return;
    rmSync(this.socketPath, { force: true });
    const server = new Server();
    const impl: UntypedServiceImplementation = {
      Status: this.unary<Record<string, never>, StatusResponse>(() => {
        this.calls.status++;
        return { version: 'v2', healthz: this.healthz, keyId: this.keyId };
      }),
      Encrypt: this.unary<EncryptRequest, EncryptResponse>((req) => {
        this.calls.encrypt++;
        return this.encrypt(req);
      }),
      Decrypt: this.unary<DecryptRequest, DecryptResponse>((req) => {
        this.calls.decrypt++;
        return this.decrypt(req);
      }),
    };
    server.addService(SERVICE, impl);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix:${this.socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    this.server = server;
  }

  /** Stops answering: connections are cut and the socket is gone. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.forceShutdown();
    rmSync(this.socketPath, { force: true });
    await new Promise((r) => setImmediate(r));
  }

  private unary<Req, Res>(handle: (req: Req) => Res | Fail) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      const out = handle(call.request);
      if (out && typeof out === 'object' && 'code' in out && 'details' in out) callback({ code: out.code, details: out.details });
      else callback(null, out as Res);
    };
  }

  private encrypt(req: EncryptRequest): EncryptResponse {
    const key = this.keys.get(this.keyId) as Buffer;
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const sealed = Buffer.concat([cipher.update(req.plaintext), cipher.final(), cipher.getAuthTag()]);
    return {
      ciphertext: Buffer.concat([nonce, sealed]),
      keyId: this.encryptKeyId ?? this.keyId,
      annotations: { [DOUBLE_ANNOTATION]: Buffer.from(String(this.generation)) },
    };
  }

  private decrypt(req: DecryptRequest): DecryptResponse | Fail {
    const key = this.keys.get(req.keyId);
    if (!key) return { code: grpcStatus.NOT_FOUND, details: `unknown key id ${JSON.stringify(req.keyId)}` };
    if (req.ciphertext.length < 12 + 16) return { code: grpcStatus.INVALID_ARGUMENT, details: 'ciphertext too short' };
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, req.ciphertext.subarray(0, 12));
      decipher.setAuthTag(req.ciphertext.subarray(req.ciphertext.length - 16));
      const plaintext = Buffer.concat([decipher.update(req.ciphertext.subarray(12, req.ciphertext.length - 16)), decipher.final()]);
      return { plaintext };
    } catch {
      return { code: grpcStatus.INVALID_ARGUMENT, details: 'ciphertext does not authenticate' };
    }
  }
}
