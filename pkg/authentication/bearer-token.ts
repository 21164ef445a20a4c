// The bearer token of a request, read the way k8s.io/apiserver's bearertoken
// authenticator reads it: a missing header, another scheme or an empty token
// means "not mine" (null), so another authenticator may still recognise the
// request; only a token that is present and wrong is a 401.

import type { IncomingMessage } from 'node:http';

export function bearerToken(req: Pick<IncomingMessage, 'headers'>): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const auth = header.trim();
  if (auth === '') return null;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return null;
  const token = parts[1] ?? '';
  return token === '' ? null : token;
}
