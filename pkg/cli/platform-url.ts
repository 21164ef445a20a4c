// The platform's address as people type it: `platform.example.com`,
// `https://platform.example.com/`, or the full management path. All become
// `https://platform.example.com`. Plain http is refused: the access key is a
// bearer token and would cross the network in clear text.

import { UsageError } from './errors.js';

/** Where the standalone server serves the management API under its base URL. */
export const MANAGEMENT_PREFIX = '/kubernetes/management';

export function normalizePlatformUrl(input: string): string {
  const text = input.trim();
  if (text === '') throw new UsageError('the platform URL is empty');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`"${input}" is not a valid URL`);
  }
  if (url.protocol === 'http:') {
    throw new UsageError(
      `refusing plain http (${input}): the access key would be sent unencrypted; use an https:// URL`,
    );
  }
  if (url.protocol !== 'https:') {
    throw new UsageError(
      `unsupported URL scheme "${url.protocol.replace(/:$/, '')}" in ${input}; use https://`,
    );
  }
  if (url.username || url.password)
    throw new UsageError('the platform URL must not carry a user name or password');
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(MANAGEMENT_PREFIX)) path = path.slice(0, -MANAGEMENT_PREFIX.length);
  return `${url.protocol}//${url.host}${path}`;
}

/** `https://platform.example.com:8443` -> `platform.example.com:8443`, as the connection secret holds it. */
export function hostOf(baseUrl: string): string {
  return baseUrl.replace(/^https:\/\//, '');
}
