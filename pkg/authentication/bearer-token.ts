// The bearer token of a request, read the way k8s.io/apiserver's bearertoken
// authenticator reads it: a missing header, another scheme or an empty token
// means "not mine" (null), so another authenticator may still recognise the
// request; only a token that is present and wrong is a 401.

import type { IncomingMessage } from 'node:http';

const BEARER = 'bearer';
const SPACE = 0x20;

export function bearerToken(req: Pick<IncomingMessage, 'headers'>): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const auth = header.trim();
  if (auth === '') return null;
  // As upstream's strings.Split(auth, " "): the scheme is what comes before the first
  // space, in any case, and the token what follows it up to the next space. Read in
  // place: no array of parts and no lower-cased copy per request.
  if (auth.charCodeAt(BEARER.length) !== SPACE || !isBearer(auth)) return null;
  const end = auth.indexOf(' ', BEARER.length + 1);
  const token = auth.slice(BEARER.length + 1, end < 0 ? auth.length : end);
  return token === '' ? null : token;
}

/** `auth` starts with "bearer" in any case (only the ASCII letters lower-case to these). */
function isBearer(auth: string): boolean {
  for (let i = 0; i < BEARER.length; i++) {
    if ((auth.charCodeAt(i) | 0x20) !== BEARER.charCodeAt(i)) return false;
  }
  return true;
}
