// Who calls the host double, and what they may do: kube-apiserver's x509 client
// certificate authenticator (CN the user, O the groups) and its bearer tokens, then
// the RBAC 403 a caller without a rule gets, in kube-apiserver's wording.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { StatusError } from './host-errors.js';
import { KINDS } from './host-kinds.js';
import type { ClientRequest } from './host-object-routes.js';
import type { DoubleToken, DoubleUser } from './host-reviews.js';

/** The caller from its verified client certificate or a registered bearer token; undefined is a 401. */
export function authenticateCaller(
  req: IncomingMessage,
  tokens: ReadonlyMap<string, DoubleToken>,
): DoubleUser | undefined {
  const socket = req.socket as TLSSocket;
  if (socket.authorized) {
    const cert = socket.getPeerCertificate();
    const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
    const cn = subject.CN;
    const o = subject.O;
    const username = Array.isArray(cn) ? (cn[cn.length - 1] ?? '') : (cn ?? '');
    const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
    if (username) return { username, groups: [...groups, 'system:authenticated'] };
  }
  const auth = req.headers.authorization ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(auth);
  const entry = m?.[1] ? tokens.get(m[1]) : undefined;
  if (entry) return { ...entry.user, groups: [...(entry.user.groups ?? []), 'system:authenticated'] };
  return undefined;
}

/** RBAC's 403 for a request the caller has no rule for. */
export function forbidden(user: DoubleUser, request: ClientRequest): StatusError {
  const res = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  const group = KINDS[request.resource]?.apiVersion.includes('/')
    ? (KINDS[request.resource]?.apiVersion.split('/')[0] ?? '')
    : '';
  const where = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
  const qualified = KINDS[request.resource]?.qualified ?? request.resource;
  return new StatusError(
    403,
    'Forbidden',
    `${qualified}${request.name ? ` "${request.name}"` : ''} is forbidden: User "${user.username}" cannot ${request.verb} resource "${res}" in API group "${group}" ${where}`,
  );
}
