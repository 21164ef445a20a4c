// The world the security table runs in: users, teams, shared secrets and access
// keys in every state the rules distinguish. Objects are written straight to
// storage (as the Store lays them out), so states no API call could produce
// today (a key made under an old tokenGeneration, one whose ttl ran out an hour
// ago) are there from the start. Every key's plain value is its name, prefixed.

import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../apis/meta/types.js';
import {
  hashAccessKey,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../apis/management/v1/owned-access-key.js';
import type { Storage } from '../../storage/interfaces.js';

export const GROUP = 'management.platform.dev';
export const ADMIN_ROLE = 'platform-admin';
export const KEY_PREFIX = '/registry';

/** The plain key of the fixture key named `name`. */
export function plainKey(name: string): string {
  return `plain-${name}`;
}

const HOUR = 3_600_000;

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function meta(name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject['metadata'] {
  return { name, uid: randomUUID(), creationTimestamp: iso(Date.now() - HOUR), generation: 1, ...extra };
}

const users: Record<string, Record<string, unknown>> = {
  alice: {
    groups: ['sso-devs'],
    // Members of qa may read alice, her keys and her status.
    access: [{ verbs: ['get'], subresources: ['accesskeys', 'status'], teams: ['qa'] }],
  },
  // alice may act as bob (Impersonate-User: bob), and may do nothing else with him.
  bob: { access: [{ verbs: ['impersonate'], users: ['alice'] }] },
  carol: { disabled: true },
  dave: { tokenGeneration: 2 },
  erin: { clusterRoles: [{ name: ADMIN_ROLE }] },
  frank: {},
  gina: { groups: ['platform:admins'] },
  // bob may do every verb on hank, but on no subresource.
  hank: { access: [{ verbs: ['*'], users: ['bob'] }] },
  // ...and on ivan, whom the table deletes.
  ivan: { access: [{ verbs: ['*'], users: ['bob'] }] },
};

const teams: Record<string, Record<string, unknown>> = {
  devs: { groups: ['sso-devs'], access: [{ verbs: ['get', 'patch'], users: ['bob'] }] },
  ops: { users: ['frank'], clusterRoles: [{ name: ADMIN_ROLE }] },
  qa: { users: ['bob'] },
};

const secrets: { namespace: string; name: string; spec: Record<string, unknown> }[] = [
  {
    namespace: 'ns1',
    name: 's1',
    spec: { owner: { user: 'alice' }, access: [{ verbs: ['get'], teams: ['devs'] }] },
  },
  { namespace: 'ns1', name: 's2', spec: {} },
  { namespace: 'ns1', name: 's3', spec: { access: [{ verbs: ['get'], users: ['*'] }] } },
  { namespace: 'p-p1', name: 's4', spec: { owner: { user: 'alice' } } },
  { namespace: 'p-p2', name: 's5', spec: { owner: { user: 'alice' } } },
];

const now = Date.now();
const generation = tokenGenerationAnnotation(GROUP);

/** Keys by name: spec, and metadata or status where the state needs them. */
const keys: Record<
  string,
  { spec: Record<string, unknown>; meta?: Partial<KubeObject['metadata']>; status?: unknown }
> = {
  'k-alice': { spec: { user: 'alice' } },
  'k-alice-disabled': { spec: { user: 'alice', disabled: true } },
  'k-alice-expired': { spec: { user: 'alice', ttl: 60 } },
  'k-alice-idle-expired': {
    spec: { user: 'alice', ttl: 600, ttlAfterLastActivity: true },
    status: { lastActivity: iso(now - HOUR / 2) },
  },
  'k-alice-idle-ok': {
    spec: { user: 'alice', ttl: 600, ttlAfterLastActivity: true },
    status: { lastActivity: iso(now - 60_000) },
  },
  'k-alice-cli': { spec: { user: 'alice', scope: { roles: [{ role: 'platformCLI' }] } } },
  'k-alice-legacy-cli': { spec: { user: 'alice', scope: { allowPlatformCli: true } } },
  'k-alice-proj': { spec: { user: 'alice', scope: { projects: [{ project: 'p1' }] } } },
  'k-alice-rules': {
    spec: {
      user: 'alice',
      scope: {
        rules: [
          {
            verbs: ['get', 'list'],
            resources: [{ group: GROUP, resources: ['sharedsecrets'], resourceNames: ['s1'] }],
            namespaces: ['ns1'],
          },
        ],
      },
    },
  },
  'k-alice-keys': {
    spec: {
      user: 'alice',
      scope: {
        rules: [{ verbs: ['create'], resources: [{ group: GROUP, resources: ['ownedaccesskeys'] }] }],
      },
    },
  },
  'k-alice-cluster-rule': {
    spec: { user: 'alice', scope: { rules: [{ verbs: ['get'], cluster: 'c1' }] } },
  },
  'k-alice-vc': {
    spec: { user: 'alice', scope: { virtualClusters: [{ project: 'p1', virtualCluster: 'vc1' }] } },
  },
  'k-admin-cli': { spec: { user: 'admin', scope: { roles: [{ role: 'platformCLI' }] } } },
  'k-bob': { spec: { user: 'bob' } },
  'k-carol': { spec: { user: 'carol' } },
  'k-dave-old': { spec: { user: 'dave' }, meta: { annotations: { [generation]: '1' } } },
  'k-dave-new': { spec: { user: 'dave' }, meta: { annotations: { [generation]: '2' } } },
  'k-erin': { spec: { user: 'erin' } },
  'k-frank': { spec: { user: 'frank' } },
  'k-gina': { spec: { user: 'gina' } },
  'k-hank': { spec: { user: 'hank' } },
  'k-hank-devs': { spec: { user: 'hank', groups: ['sso-devs'] } },
  'k-ghost': { spec: { user: 'ghost' } },
  'k-robot': { spec: { subject: 'robot' } },
  'k-team-devs': { spec: { team: 'devs' } },
  'k-team-ops': { spec: { team: 'ops' } },
};

export interface SeededNames {
  readonly users: readonly string[];
  readonly teams: readonly string[];
  readonly keys: readonly string[];
  readonly secrets: readonly { namespace: string; name: string }[];
}

/** Writes the fixtures; returns what to wait for in the identity cache. */
export async function seedFixtures(storage: Storage): Promise<SeededNames> {
  const root = `${KEY_PREFIX}/${GROUP}`;
  const apiVersion = `${GROUP}/v1`;
  for (const [name, spec] of Object.entries(users)) {
    await storage.create(`${root}/users/${name}`, { apiVersion, kind: 'User', metadata: meta(name), spec });
  }
  for (const [name, spec] of Object.entries(teams)) {
    await storage.create(`${root}/teams/${name}`, { apiVersion, kind: 'Team', metadata: meta(name), spec });
  }
  for (const s of secrets) {
    await storage.create(`${root}/sharedsecrets/${s.namespace}/${s.name}`, {
      apiVersion,
      kind: 'SharedSecret',
      metadata: meta(s.name, { namespace: s.namespace }),
      spec: { data: { token: Buffer.from(`secret-${s.name}`).toString('base64') }, ...s.spec },
    });
  }
  for (const [name, k] of Object.entries(keys)) {
    // As this server stores every key: with a revision (an hour-old key of the admin, whom
    // the server creates at its start, is not a former admin's).
    const metadata = meta(name, k.meta ?? {});
    metadata.annotations = { [keyRevisionAnnotation(GROUP)]: `rev-${name}`, ...metadata.annotations };
    const obj: KubeObject = {
      apiVersion,
      kind: 'OwnedAccessKey',
      metadata,
      spec: { ...k.spec, key: hashAccessKey(plainKey(name)) },
    };
    if (k.status) obj['status'] = k.status;
    await storage.create(`${root}/ownedaccesskeys/${name}`, obj);
  }
  return {
    users: Object.keys(users),
    teams: Object.keys(teams),
    keys: Object.keys(keys),
    secrets: secrets.map(({ namespace, name }) => ({ namespace, name })),
  };
}
