// The host double's generic object API, as kube-apiserver's REST handlers serve it
// for the kinds the platform server uses (host-kinds.ts): the paths of ConfigMaps,
// Secrets, Roles, RoleBindings and CertificateSigningRequests, the verb a request
// maps to (405 for one the path does not take), get, list, watch (with 410 Expired
// for a compacted resourceVersion), create, update and delete with their Status
// errors. What is particular to a kind comes from host-kinds.ts and host-csr.ts; the
// double itself adds authentication, authorization of its callers and its knobs.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { prepareCertificateSigningRequest, updateCertificateSigningRequest } from './host-csr.js';
import { StatusError, methodNotAllowed, notFoundPage } from './host-errors.js';
import { asRecord, readJson, writeJson } from './host-http.js';
import { KINDS, normalizeSecret, notFound, withKind, type KindInfo } from './host-kinds.js';
import type { DoubleUser } from './host-reviews.js';
import type { ObjectStore, StoredObject, WatchFilter } from './object-store.js';

export interface ClientRequest {
  readonly verb: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** What the object API needs from the double around it. */
export interface ObjectApiContext {
  readonly store: ObjectStore;
  /** Open watch responses, so the double can end them (closeWatches, stop). */
  readonly watchStreams: Set<ServerResponse>;
  /** Whether a watch's headers wait for its first event. */
  holdWatchHeaders(): boolean;
  /** Throws a 403 Status when the caller may not make the request. */
  authorize(user: DoubleUser, request: ClientRequest): void;
  /** After a create: e.g. the approval policy denying a new CSR. */
  afterCreate(resource: string, created: StoredObject): void;
  /** After an update: e.g. the signing controller looking at an approved CSR. */
  afterUpdate(resource: string, name: string): void;
}

/** The object a path names, or a 404 for a path the double serves nothing at. */
export function objectPath(parts: readonly string[]): Omit<ClientRequest, 'verb'> {
  const [p0, p1, p2, p3] = parts;
  if (p0 === 'api' && p1 === 'v1' && p2 === 'namespaces' && parts.length >= 5 && parts.length <= 6) {
    // /api/v1/namespaces/{ns}/{configmaps|secrets}[/{name}]
    const resource = parts[4] ?? '';
    if (resource === 'configmaps' || resource === 'secrets')
      return { namespace: p3 ?? '', resource, name: parts[5] ?? '', subresource: '' };
  } else if (p0 === 'apis' && p1 === 'rbac.authorization.k8s.io' && p2 === 'v1' && p3 === 'namespaces') {
    // /apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{roles|rolebindings}[/{name}]
    const resource = parts[5] ?? '';
    if (parts.length >= 6 && parts.length <= 7 && (resource === 'roles' || resource === 'rolebindings'))
      return { namespace: parts[4] ?? '', resource, name: parts[6] ?? '', subresource: '' };
  } else if (
    p0 === 'apis' &&
    p1 === 'certificates.k8s.io' &&
    p2 === 'v1' &&
    p3 === 'certificatesigningrequests'
  ) {
    // /apis/certificates.k8s.io/v1/certificatesigningrequests[/{name}[/approval|/status]]
    const subresource = parts[5] ?? '';
    if (parts.length <= 6 && (subresource === '' || subresource === 'approval' || subresource === 'status'))
      return { namespace: '', resource: p3, name: parts[4] ?? '', subresource };
  }
  throw notFoundPage();
}

/** The verb of a request as kube-apiserver's request info derives it; 405 for one the path does not take. */
export function objectVerb(method: string, name: string, subresource: string, watch: boolean): string {
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', DELETE: 'delete' };
  const verb = method === 'GET' ? (name ? 'get' : watch ? 'watch' : 'list') : (verbs[method] ?? '');
  const collection = verb === 'list' || verb === 'watch' || verb === 'create';
  if (verb === '' || (name === '') !== collection) throw methodNotAllowed();
  if (subresource !== '' && verb !== 'get' && verb !== 'update') throw methodNotAllowed();
  return verb;
}

function fieldSelectorName(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const term of selector.split(',')) {
    const m = /^metadata\.name==?(.*)$/.exec(term.trim());
    if (m) return m[1] ?? '';
  }
  return undefined;
}

export class ObjectApi {
  constructor(private readonly ctx: ObjectApiContext) {}

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    user: DoubleUser,
    url: URL,
    parts: string[],
  ): Promise<void> {
    const { resource, namespace, name, subresource } = objectPath(parts);
    const info = KINDS[resource];
    if (!info) throw notFoundPage();
    const watch = url.searchParams.get('watch');
    const verb = objectVerb(req.method ?? 'GET', name, subresource, watch === 'true' || watch === '1');
    this.ctx.authorize(user, { verb, resource, subresource, namespace, name });

    const store = this.ctx.store;
    const nameFilter = fieldSelectorName(url.searchParams.get('fieldSelector'));
    const filter: WatchFilter =
      nameFilter !== undefined ? { resource, namespace, name: nameFilter } : { resource, namespace };
    switch (verb) {
      case 'get': {
        const obj = store.get(resource, namespace, name);
        if (!obj) throw notFound(info, name);
        return writeJson(res, 200, withKind(info, obj));
      }
      case 'list':
        return writeJson(res, 200, {
          apiVersion: info.apiVersion,
          kind: `${info.kind}List`,
          metadata: { resourceVersion: String(store.currentRevision) },
          items: store.list(filter).map((o) => withKind(info, o)),
        });
      case 'watch':
        return this.serveWatch(req, res, info, filter, url.searchParams);
      case 'create': {
        const created = this.create(info, resource, namespace, asRecord(await readJson(req)), user);
        return writeJson(res, 201, withKind(info, created));
      }
      case 'update': {
        const body = asRecord(await readJson(req));
        const updated = this.update(info, resource, namespace, name, subresource, body);
        return writeJson(res, 200, withKind(info, updated));
      }
      case 'delete': {
        const deleted = store.delete(resource, namespace, name);
        if (!deleted) throw notFound(info, name);
        return writeJson(res, 200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name, kind: resource, uid: deleted.metadata.uid },
        });
      }
    }
  }

  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    info: KindInfo,
    filter: WatchFilter,
    query: URLSearchParams,
  ): void {
    const store = this.ctx.store;
    const rvParam = query.get('resourceVersion') ?? '';
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // kube-apiserver flushes a watch's headers at once.
    if (!this.ctx.holdWatchHeaders()) res.flushHeaders();
    this.ctx.watchStreams.add(res);
    const send = (type: string, object: unknown): void => {
      if (res.writableEnded || res.destroyed) return;
      res.write(JSON.stringify({ type, object }) + '\n');
    };
    let since: number;
    if (rvParam === '' || rvParam === '0') {
      for (const obj of store.list(filter)) send('ADDED', withKind(info, obj));
      since = store.currentRevision;
    } else {
      since = Number(rvParam);
      const backlog = Number.isFinite(since) ? store.eventsSince(filter, since) : undefined;
      if (!backlog) {
        send('ERROR', {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${rvParam} (${store.compactedRevision})`,
          reason: 'Expired',
          code: 410,
        });
        this.ctx.watchStreams.delete(res);
        res.end();
        return;
      }
      for (const e of backlog) send(e.type, withKind(info, e.object));
      since = Math.max(since, backlog[backlog.length - 1]?.revision ?? since);
    }
    const unsubscribe = store.subscribe(filter, (e) => {
      if (e.revision > since) send(e.type, withKind(info, e.object));
    });
    const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    const cleanup = (): void => {
      unsubscribe();
      clearTimeout(timer);
      this.ctx.watchStreams.delete(res);
    };
    res.once('close', cleanup);
    res.once('finish', cleanup);
    req.once('close', cleanup);
  }

  private create(
    info: KindInfo,
    resource: string,
    namespace: string,
    body: Record<string, unknown>,
    user: DoubleUser,
  ): StoredObject {
    const meta = asRecord(body.metadata);
    if (
      info.namespaced &&
      typeof meta.namespace === 'string' &&
      meta.namespace !== '' &&
      meta.namespace !== namespace
    )
      throw new StatusError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    let name = typeof meta.name === 'string' ? meta.name : '';
    if (name === '' && typeof meta.generateName === 'string' && meta.generateName !== '')
      name = meta.generateName + randomBytes(4).toString('hex').slice(0, 5);
    if (name === '')
      throw new StatusError(
        422,
        'Invalid',
        `${info.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
      );
    const obj: StoredObject = {
      ...body,
      apiVersion: info.apiVersion,
      kind: info.kind,
      metadata: { ...meta, name, ...(info.namespaced ? { namespace } : {}) },
    };
    delete obj.metadata.resourceVersion;
    delete obj.metadata.uid;
    if (resource === 'secrets') normalizeSecret(obj);
    if (resource === 'certificatesigningrequests') prepareCertificateSigningRequest(obj, user);
    const created = this.ctx.store.create(resource, obj);
    if (!created)
      throw new StatusError(409, 'AlreadyExists', `${info.qualified} "${name}" already exists`, {
        name,
        kind: resource,
      });
    this.ctx.afterCreate(resource, created);
    return created;
  }

  private update(
    info: KindInfo,
    resource: string,
    namespace: string,
    name: string,
    subresource: string,
    body: Record<string, unknown>,
  ): StoredObject {
    const current = this.ctx.store.get(resource, namespace, name);
    if (!current) throw notFound(info, name);
    const meta = asRecord(body.metadata);
    if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name)
      throw new StatusError(
        400,
        'BadRequest',
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    if (
      typeof meta.resourceVersion === 'string' &&
      meta.resourceVersion !== '' &&
      meta.resourceVersion !== current.metadata.resourceVersion
    )
      throw new StatusError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${info.qualified} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: resource },
      );
    let next: StoredObject;
    if (resource === 'certificatesigningrequests') {
      next = updateCertificateSigningRequest(current, subresource, body);
    } else {
      next = {
        ...body,
        apiVersion: info.apiVersion,
        kind: info.kind,
        metadata: { ...meta, name, namespace },
      } as StoredObject;
      if (resource === 'secrets') normalizeSecret(next);
    }
    const updated = this.ctx.store.update(resource, next);
    if (!updated) throw notFound(info, name);
    this.ctx.afterUpdate(resource, name);
    return updated;
  }
}
