// The client side of a KMS v2 plugin (envelope/kmsv2 grpc_service.go): gRPC over
// the plugin's unix socket, no transport security (the socket's file permissions
// are the boundary), authority `localhost`, and every call waits for the connection
// to be ready up to the provider's `timeout`, as upstream dials with WaitForReady.
// A plugin that is down therefore costs a caller at most `timeout`, never a hang.

import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { Codec, DecryptRequest, EncryptResponse, StatusResponse } from './protocol.js';
import { KMS_METHODS } from './protocol.js';

/** What the envelope transformer and the probe need from a plugin (kmsservice.Service). */
export interface KMSService {
  status(): Promise<StatusResponse>;
  encrypt(uid: string, plaintext: Buffer): Promise<EncryptResponse>;
  decrypt(uid: string, request: Omit<DecryptRequest, 'uid'>): Promise<Buffer>;
  close(): void;
}

/**
 * util.ParseEndpoint: `unix:///path/to.sock` names a socket file, `unix:///@name`
 * a Linux abstract socket. Returns grpc-js's target, or throws upstream's message.
 */
export function grpcTarget(endpoint: string): string {
  if (endpoint === '') throw new Error("remote KMS provider can't use empty string as endpoint");
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`invalid endpoint ${JSON.stringify(endpoint)} for remote KMS provider`);
  }
  if (url.protocol !== 'unix:') throw new Error(`unsupported scheme ${JSON.stringify(url.protocol.replace(/:$/, ''))} for remote KMS provider`);
  const path = decodeURIComponent(url.pathname);
  if (path.startsWith('/@')) return `unix-abstract:${path.slice(2)}`;
  return `unix:${path}`;
}

export class GrpcKMSService implements KMSService {
  private readonly client: Client;

  constructor(
    endpoint: string,
    private readonly callTimeoutMs: number,
  ) {
    this.client = new Client(grpcTarget(endpoint), credentials.createInsecure(), {
      'grpc.default_authority': 'localhost',
    });
  }

  private call<Req, Res>(
    { path, request, response }: { path: string; request: Codec<Req>; response: Codec<Res> },
    argument: Req,
  ): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        path,
        request.serialize,
        response.deserialize,
        argument,
        new Metadata({ waitForReady: true }),
        { deadline: Date.now() + this.callTimeoutMs },
        (err: ServiceError | null, value?: Res) => {
          // grpc-js says what failed (code and details); it never echoes the request's bytes.
          if (err) reject(new Error(`rpc error: code = ${grpcCodeName(err.code)} desc = ${err.details}`));
          else if (value === undefined) reject(new Error('rpc error: empty response'));
          else resolve(value);
        },
      );
    });
  }

  status(): Promise<StatusResponse> {
    return this.call(KMS_METHODS.status, {});
  }

  encrypt(uid: string, plaintext: Buffer): Promise<EncryptResponse> {
    return this.call(KMS_METHODS.encrypt, { plaintext, uid });
  }

  async decrypt(uid: string, request: Omit<DecryptRequest, 'uid'>): Promise<Buffer> {
    const res = await this.call(KMS_METHODS.decrypt, { ...request, uid });
    return res.plaintext;
  }

  close(): void {
    this.client.close();
  }
}

const CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** grpc-go's codes.Code.String(), so errors read as kube-apiserver's do. */
function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}
