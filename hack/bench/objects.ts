// The objects the benchmark writes: Users of about 1 KiB as stored (a description
// makes up most of it), and the raw values of the same size for etcd baselines.

export const GROUP = 'management.platform.dev';
export const API_PATH = `/kubernetes/management/apis/${GROUP}/v1`;

/** ~1 KiB once the server has added uid, timestamps and managedFields. */
const DESCRIPTION = (
  'A benchmark user. This text stands for what people write about a user: the team they ' +
  'work in, what they are responsible for, who to ask when they are away, and where their ' +
  'services run. It is long enough that the stored object is about one kibibyte. '
).repeat(2);

export function userBody(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'User',
    metadata: { name, labels: { 'bench.platform.dev/set': 'load' } },
    spec: {
      username: name,
      displayName: `User ${name}`,
      email: `${name}@example.com`,
      description: DESCRIPTION,
      ...extra,
    },
  };
}

/** The namespace the benchmark's Global Secrets live in. */
export const SECRETS_NAMESPACE = 'bench';

/**
 * A Global Secret of about 1 KiB as stored, as the Users are: the kind encryption at
 * rest covers by default, so its rows measure what encryption costs a request.
 */
export function sharedSecretBody(name: string): Record<string, unknown> {
  const value = Buffer.from(DESCRIPTION.slice(0, 160)).toString('base64');
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'SharedSecret',
    metadata: { name, namespace: SECRETS_NAMESPACE, labels: { 'bench.platform.dev/set': 'load' } },
    spec: { displayName: `Secret ${name}`, data: { username: value, password: value, token: value } },
  };
}

/**
 * An OwnedAccessKey of `user`; without `key` the server generates one (as it does for a
 * plain user creating a key for themselves, which their own rules allow).
 */
export function accessKeyBody(name: string, user: string, key?: string): Record<string, unknown> {
  const spec: Record<string, unknown> = { displayName: name, description: 'A benchmark access key.', user };
  if (key !== undefined) spec['key'] = key;
  return { apiVersion: `${GROUP}/v1`, kind: 'OwnedAccessKey', metadata: { name }, spec };
}

/** A value of `size` bytes for raw etcd puts (JSON-like, so nothing compresses it differently). */
export function rawValue(size: number): Buffer {
  const body = `{"spec":{"description":"${'x'.repeat(Math.max(0, size - 30))}"}}`;
  return Buffer.from(body.slice(0, Math.max(size, 2)).padEnd(size, ' '));
}
