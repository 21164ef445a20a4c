// The connection secret on the host cluster: string keys `accessKey` and `host`
// (the platform's address without its scheme), as the specification says, plus the
// optional keys upstream also writes (`project`, `insecure`,
// `certificateAuthorityData`) so a virtual cluster can reach a platform whose
// certificate is not signed by a public authority.

import { DEFAULT_SECRET_NAME } from './settings.js';

export const SECRET_KEYS = {
  accessKey: 'accessKey',
  host: 'host',
  project: 'project',
  insecure: 'insecure',
  certificateAuthorityData: 'certificateAuthorityData',
} as const;

/** Labels so an operator can find every connection secret and what wrote it. */
export const CONNECTION_LABEL = 'platform.dev/connection';

export interface ConnectionValues {
  readonly accessKey: string;
  /** With or without a scheme; stored without. */
  readonly host: string;
  readonly project?: string | undefined;
  readonly insecure?: boolean | undefined;
  /** PEM text of the CA that signs the platform's serving certificate. */
  readonly caPem?: string | undefined;
}

export interface SecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  type: 'Opaque';
  data: Record<string, string>;
}

/** `https://platform.example.com/` -> `platform.example.com` (the form the secret holds). */
export function stripScheme(host: string): string {
  return host
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\/+$/, '');
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export function connectionSecret(
  values: ConnectionValues,
  where: { namespace: string; name?: string | undefined },
  mode: 'shared' | 'dedicated',
): SecretObject {
  const data: Record<string, string> = {
    [SECRET_KEYS.accessKey]: b64(values.accessKey),
    [SECRET_KEYS.host]: b64(stripScheme(values.host)),
  };
  if (values.project) data[SECRET_KEYS.project] = b64(values.project);
  if (values.insecure) data[SECRET_KEYS.insecure] = b64('true');
  if (values.caPem) data[SECRET_KEYS.certificateAuthorityData] = b64(values.caPem);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: where.name ?? DEFAULT_SECRET_NAME,
      namespace: where.namespace,
      labels: { [CONNECTION_LABEL]: mode },
    },
    type: 'Opaque',
    data,
  };
}

/** The values of a found secret (already base64-decoded), or what is missing from it. */
export function connectionValuesOf(
  data: Readonly<Record<string, string>>,
): { values: ConnectionValues } | { missing: string[] } {
  const accessKey = data[SECRET_KEYS.accessKey]?.trim() ?? '';
  const host = data[SECRET_KEYS.host]?.trim() ?? '';
  const missing: string[] = [];
  if (!accessKey) missing.push(SECRET_KEYS.accessKey);
  if (!host) missing.push(SECRET_KEYS.host);
  if (missing.length > 0) return { missing };
  const project = data[SECRET_KEYS.project]?.trim() || undefined;
  const insecure = data[SECRET_KEYS.insecure]?.trim() === 'true' || undefined;
  const caPem = data[SECRET_KEYS.certificateAuthorityData] || undefined;
  return { values: { accessKey, host, project, insecure, caPem } };
}
