// Request bodies in Kubernetes' protobuf encoding (apimachinery
// runtime/serializer/protobuf): the 4-byte magic `k8s\0`, then a runtime.Unknown
// whose typeMeta names the kind and whose raw bytes are the object's own message.
// kubectl 1.32 sends some requests (the self-service reviews) only this way and does
// not retry in JSON on a 415, so the kinds that need it declare their messages (as
// protobufjs JSON descriptors, with upstream's field numbers from the k8s.io/api
// generated.proto files) and get a decoder that yields the object as JSON would.

import protobuf from 'protobufjs';

import { newBadRequest } from './errors.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** runtime.Unknown and the parts of ObjectMeta a review can carry (k8s.io/apimachinery generated.proto). */
const META_MESSAGES: protobuf.INamespace['nested'] = {
  TypeMeta: { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } },
  Unknown: {
    fields: {
      typeMeta: { type: 'TypeMeta', id: 1 },
      raw: { type: 'bytes', id: 2 },
      contentEncoding: { type: 'string', id: 3 },
      contentType: { type: 'string', id: 4 },
    },
  },
  // Only the names: the rest (timestamps, labels, managedFields) is skipped by the
  // decoder as unknown fields, as nothing these kinds do reads it.
  ObjectMeta: {
    fields: {
      name: { type: 'string', id: 1 },
      generateName: { type: 'string', id: 2 },
      namespace: { type: 'string', id: 3 },
    },
  },
};

/** Turns the bytes of one kind's message into the object its JSON form would decode to. */
export type ProtobufDecoder = (raw: Buffer) => Record<string, unknown>;

export interface ProtobufKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** Message descriptors; `ObjectMeta` is available to reference. */
  readonly messages: NonNullable<protobuf.INamespace['nested']>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Drops what proto2 carries but JSON omits: empty strings, empty maps and lists,
 * and messages left empty by that (Go's zero values, which kubectl writes out).
 */
function pruneZeroValues(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(pruneZeroValues).filter((v) => v !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const pruned = pruneZeroValues(v);
      if (pruned !== undefined) out[k] = pruned;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (value === '') return undefined;
  return value;
}

/**
 * A decoder for one kind: checks the magic and the envelope's kind, decodes the
 * object's message, and keeps zero-valued fields out so the object reads as the
 * JSON a client would have sent. Malformed bodies are 400s, never a crash.
 */
export function protobufDecoder(kind: ProtobufKind): ProtobufDecoder {
  const root = protobuf.Root.fromJSON({ nested: { ...META_MESSAGES, ...kind.messages } });
  const unknown = root.lookupType('Unknown');
  const object = root.lookupType(kind.kind);
  return (raw) => {
    if (raw.length < MAGIC.length || !raw.subarray(0, MAGIC.length).equals(MAGIC)) {
      throw newBadRequest(
        'the request body is not in the Kubernetes protobuf encoding (no "k8s\\x00" prefix)',
      );
    }
    let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
    let message: Record<string, unknown>;
    try {
      envelope = unknown.toObject(unknown.decode(raw.subarray(MAGIC.length))) as typeof envelope;
      message = object.toObject(object.decode(envelope.raw ?? new Uint8Array()), {
        defaults: false,
        arrays: false,
        objects: false,
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'malformed';
      throw newBadRequest(`unable to decode the protobuf body as ${kind.kind}: ${reason}`);
    }
    const apiVersion = envelope.typeMeta?.apiVersion ?? '';
    const gotKind = envelope.typeMeta?.kind ?? '';
    if (apiVersion !== kind.apiVersion || gotKind !== kind.kind) {
      throw newBadRequest(
        `the protobuf body holds ${gotKind || 'an object without a kind'} ${apiVersion}, not ${kind.kind} ${kind.apiVersion}`.trim(),
      );
    }
    const body = pruneZeroValues(message);
    return { apiVersion, kind: gotKind, ...(isRecord(body) ? body : {}) };
  };
}
