// Building audit events as upstream does (k8s.io/apiserver pkg/audit/request.go and
// evaluator.go, utilnet.SourceIPs, metav1.MicroTime), and encoding them with their
// fields in upstream's order, so a log line reads like kube-apiserver's.

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

import {
  AUDIT_API_VERSION,
  type Event,
  type EventUser,
  type Level,
  type ObjectReference,
  type ResponseStatus,
} from './types.js';

const MAX_USER_AGENT_LENGTH = 1024;
const USER_AGENT_TRUNCATE_SUFFIX = '...TRUNCATED';

/**
 * metav1.MicroTime's JSON form (RFC 3339 with exactly six fractional digits, UTC):
 * `2024-05-01T10:20:30.123456Z`. `epochMs` may carry a fraction of a millisecond.
 */
export function microTime(epochMs: number): string {
  const wholeMs = Math.floor(epochMs);
  const iso = new Date(wholeMs).toISOString(); // 2024-05-01T10:20:30.123Z
  const micros = Math.min(999, Math.floor((epochMs - wholeMs) * 1000));
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** Now, with microseconds (Date.now() has only milliseconds). */
export function nowEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** An IP as Go prints a net.IP: IPv4-mapped IPv6 addresses as plain IPv4. */
function canonicalIP(text: string): string | undefined {
  const trimmed = text.trim();
  const kind = isIP(trimmed);
  if (kind === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  if (mapped?.[1]) return mapped[1];
  return kind === 6 ? trimmed.toLowerCase() : trimmed;
}

function headerValue(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

/**
 * utilnet.SourceIPs: the X-Forwarded-For addresses (every valid one, in order), then
 * X-Real-Ip unless already listed, then the connection's address unless it is the
 * last one listed. All but the last can be set by the client.
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const forwarded = headerValue(req, 'x-forwarded-for');
  if (forwarded !== '') {
    for (const part of forwarded.split(',')) {
      const ip = canonicalIP(part);
      if (ip) ips.push(ip);
    }
  }
  const realIP = canonicalIP(headerValue(req, 'x-real-ip'));
  if (realIP && !ips.includes(realIP)) ips.push(realIP);
  const remote = canonicalIP(req.socket.remoteAddress ?? '');
  if (remote && (ips.length === 0 || ips[ips.length - 1] !== remote)) ips.push(remote);
  return ips;
}

/** The User-Agent, cut at 1024 bytes as upstream cuts it. */
export function userAgentOf(req: IncomingMessage): string {
  const ua = headerValue(req, 'user-agent');
  return ua.length > MAX_USER_AGENT_LENGTH
    ? ua.slice(0, MAX_USER_AGENT_LENGTH) + USER_AGENT_TRUNCATE_SUFFIX
    : ua;
}

export interface NewEventInput {
  readonly level: Level;
  readonly auditID: string;
  readonly requestURI: string;
  readonly verb: string;
  /** Undefined for a request that did not authenticate: `user: {}`. */
  readonly user: EventUser | undefined;
  readonly sourceIPs: string[];
  readonly userAgent: string;
  readonly objectRef: ObjectReference | undefined;
  readonly requestReceivedEpochMs: number;
}

/**
 * A new event, its fields laid out in upstream's order from the start (those not known
 * yet undefined, which JSON leaves out), so that it encodes as JSON.stringify of itself
 * (encode.ts) with no ordered copy.
 */
export function newEvent(input: NewEventInput): Event {
  const received = microTime(input.requestReceivedEpochMs);
  return {
    kind: 'Event',
    apiVersion: AUDIT_API_VERSION,
    level: input.level,
    auditID: input.auditID,
    stage: 'RequestReceived',
    requestURI: input.requestURI,
    verb: input.verb,
    user: input.user ?? {},
    impersonatedUser: undefined,
    sourceIPs: input.sourceIPs.length > 0 ? input.sourceIPs : undefined,
    userAgent: input.userAgent !== '' ? input.userAgent : undefined,
    objectRef: input.objectRef,
    responseStatus: undefined,
    requestObject: undefined,
    responseObject: undefined,
    requestReceivedTimestamp: received,
    stageTimestamp: received,
    annotations: undefined,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The response status an event keeps: for a Status (an error, mostly) its bounded
 * fields, as upstream copies them; for anything else the code alone.
 */
export function responseStatusOf(code: number, obj: unknown): ResponseStatus {
  if (!isRecord(obj) || obj['kind'] !== 'Status' || obj['apiVersion'] !== 'v1') return { metadata: {}, code };
  const text = (field: string): string | undefined => {
    const v = obj[field];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const [state, message, reason] = [text('status'), text('message'), text('reason')];
  // In metav1.Status's field order; absent fields left out, as omitempty does.
  return {
    metadata: {},
    ...(state ? { status: state } : {}),
    ...(message ? { message } : {}),
    ...(reason ? { reason } : {}),
    ...(obj['details'] !== undefined ? { details: obj['details'] } : {}),
    code: typeof obj['code'] === 'number' ? obj['code'] : code,
  };
}

function orderedObjectRef(ref: ObjectReference): ObjectReference {
  const out: ObjectReference = {};
  if (ref.resource) out.resource = ref.resource;
  if (ref.namespace) out.namespace = ref.namespace;
  if (ref.name) out.name = ref.name;
  if (ref.uid) out.uid = ref.uid;
  if (ref.apiGroup) out.apiGroup = ref.apiGroup;
  if (ref.apiVersion) out.apiVersion = ref.apiVersion;
  if (ref.resourceVersion) out.resourceVersion = ref.resourceVersion;
  if (ref.subresource) out.subresource = ref.subresource;
  return out;
}

/**
 * A copy of `map` with its keys in sorted order, as Go writes a map: the keys sorted
 * by code unit (Array.prototype.sort's own order), each value through `copy`. Built
 * key by key rather than through Object.entries, sort and fromEntries: an audited
 * request snapshots its annotations and the user's extra for every event it stores.
 */
function sortedCopy<T>(map: Readonly<Record<string, T>>, copy?: (value: T) => T): Record<string, T> {
  const keys = Object.keys(map);
  if (keys.length > 1) keys.sort();
  const out: Record<string, T> = {};
  for (const key of keys) {
    const value = copy ? copy(map[key] as T) : (map[key] as T);
    // An own property even for `__proto__` (as fromEntries made it), never the prototype.
    if (key === '__proto__') {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    } else out[key] = value;
  }
  return out;
}

function orderedUser(user: EventUser): EventUser {
  const out: EventUser = {};
  if (user.username) out.username = user.username;
  if (user.uid) out.uid = user.uid;
  if (user.groups && user.groups.length > 0) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length > 0) {
    // Go writes a map's keys sorted.
    out.extra = sortedCopy(user.extra, (values) => [...values]);
  }
  return out;
}

/**
 * A copy of the event as it is now, with the fields in the order upstream writes
 * them. The event of a request changes from stage to stage; a backend keeps copies.
 */
export function snapshotEvent(ev: Event): Event {
  const out: Event = {
    kind: 'Event',
    apiVersion: AUDIT_API_VERSION,
    level: ev.level,
    auditID: ev.auditID,
    stage: ev.stage,
    requestURI: ev.requestURI,
    verb: ev.verb,
    user: orderedUser(ev.user),
  } as Event;
  if (ev.impersonatedUser) out.impersonatedUser = orderedUser(ev.impersonatedUser);
  if (ev.sourceIPs) out.sourceIPs = [...ev.sourceIPs];
  if (ev.userAgent) out.userAgent = ev.userAgent;
  if (ev.objectRef) out.objectRef = orderedObjectRef(ev.objectRef);
  if (ev.responseStatus) out.responseStatus = ev.responseStatus;
  if (ev.requestObject !== undefined) out.requestObject = ev.requestObject;
  if (ev.responseObject !== undefined) out.responseObject = ev.responseObject;
  out.requestReceivedTimestamp = ev.requestReceivedTimestamp;
  out.stageTimestamp = ev.stageTimestamp;
  if (ev.annotations && Object.keys(ev.annotations).length > 0)
    out.annotations = sortedCopy(ev.annotations);
  return out;
}
