// From the host's JSON (or @kubernetes/client-node's models of it, which carry the
// same field names) to this package's shapes. Defensive: a field of the wrong type
// reads as absent rather than throwing, because a watch event or a newer host may
// carry what an older model does not expect.

import type {
  CertificateSigningRequestCondition,
  HostCertificateSigningRequest,
  HostConfigMap,
  HostObjectMeta,
  HostSecret,
  HostUserInfo,
  SubjectAccessReviewResult,
  TokenReviewResult,
} from './types.js';

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Obj)) if (typeof val === 'string') out[k] = val;
  return out;
}

function extraOf(v: unknown): Record<string, string[]> | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, val] of Object.entries(v as Obj)) out[k] = strings(val);
  return Object.keys(out).length > 0 ? out : undefined;
}

export function toMeta(v: unknown): HostObjectMeta {
  const m = obj(v);
  const labels = stringMap(m.labels);
  const annotations = stringMap(m.annotations);
  return {
    name: str(m.name),
    ...(str(m.namespace) ? { namespace: str(m.namespace) } : {}),
    ...(str(m.uid) ? { uid: str(m.uid) } : {}),
    ...(str(m.resourceVersion) ? { resourceVersion: str(m.resourceVersion) } : {}),
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

export function toUserInfo(v: unknown): HostUserInfo {
  const u = obj(v);
  const extra = extraOf(u.extra);
  return {
    username: str(u.username),
    ...(str(u.uid) ? { uid: str(u.uid) } : {}),
    groups: strings(u.groups),
    ...(extra ? { extra } : {}),
  };
}

export function toTokenReviewResult(v: unknown): TokenReviewResult {
  const status = obj(obj(v).status);
  const authenticated = status.authenticated === true;
  const audiences = strings(status.audiences);
  return {
    authenticated,
    ...(authenticated ? { user: toUserInfo(status.user) } : {}),
    ...(audiences.length > 0 ? { audiences } : {}),
    ...(str(status.error) ? { error: str(status.error) } : {}),
  };
}

export function toSubjectAccessReviewResult(v: unknown): SubjectAccessReviewResult {
  const status = obj(obj(v).status);
  return {
    allowed: status.allowed === true,
    denied: status.denied === true,
    reason: str(status.reason),
    evaluationError: str(status.evaluationError),
  };
}

export function toConfigMap(v: unknown): HostConfigMap {
  const o = obj(v);
  return { metadata: toMeta(o.metadata), data: stringMap(o.data) ?? {} };
}

export function toSecret(v: unknown): HostSecret {
  const o = obj(v);
  const data: Record<string, Buffer> = {};
  for (const [k, val] of Object.entries(obj(o.data)))
    if (typeof val === 'string') data[k] = Buffer.from(val, 'base64');
  // stringData is write-only on a real host, but a literal object may carry it.
  for (const [k, val] of Object.entries(obj(o.stringData)))
    if (typeof val === 'string') data[k] = Buffer.from(val, 'utf8');
  return { metadata: toMeta(o.metadata), ...(str(o.type) ? { type: str(o.type) } : {}), data };
}

function toCondition(v: unknown): CertificateSigningRequestCondition {
  const c = obj(v);
  return {
    type: str(c.type),
    status: str(c.status),
    ...(str(c.reason) ? { reason: str(c.reason) } : {}),
    ...(str(c.message) ? { message: str(c.message) } : {}),
  };
}

export function toCertificateSigningRequest(v: unknown): HostCertificateSigningRequest {
  const o = obj(v);
  const spec = obj(o.spec);
  const status = obj(o.status);
  const certificate = str(status.certificate);
  const expiration = spec.expirationSeconds;
  return {
    metadata: toMeta(o.metadata),
    signerName: str(spec.signerName),
    requestPem: Buffer.from(str(spec.request), 'base64').toString('utf8'),
    usages: strings(spec.usages),
    ...(typeof expiration === 'number' ? { expirationSeconds: expiration } : {}),
    ...(str(spec.username) ? { username: str(spec.username) } : {}),
    conditions: Array.isArray(status.conditions) ? status.conditions.map(toCondition) : [],
    ...(certificate ? { certificatePem: Buffer.from(certificate, 'base64').toString('utf8') } : {}),
  };
}
