// Shapes several management kinds share: owners, access rules, cluster roles,
// secret references, access-key scopes and identities, conditions. Types and
// schemas sit side by side so they cannot drift apart. Field names follow the
// specification; the scope's command-line flag is called `allowPlatformCli`.

import type { KubeObject } from '../../meta/types.js';
import type { ResourceInfo, Verb } from '../../meta/resource-info.js';
import { objectMetaSchema } from './object-meta-schema.js';
import {
  atomicList,
  atomicObj,
  bool,
  bytes,
  dateTime,
  enumOf,
  int64,
  obj,
  listMap,
  str,
  stringList,
  stringSet,
  type JSONSchema,
} from './schema-builders.js';

export const VERSION = 'v1';

/** Every verb a stored kind offers; discovery sorts them. */
export const STORED_KIND_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** A kind as the rest of the server needs it: how it is named and what it looks like. */
export interface ManagementKind {
  readonly info: ResourceInfo;
  readonly schema: JSONSchema;
}

// ---- owner ----------------------------------------------------------------

/** The user or team an object belongs to (upstream UserOrTeam). */
export interface UserOrTeam {
  user?: string;
  team?: string;
}

// Atomic: user and team are alternatives, so the owner changes as one value. Were it
// granular, one manager setting `user` and another `team` would leave both set.
export function ownerSchema(): JSONSchema {
  return atomicObj('Owner of the object: a user or a team. Set one of the two.', {
    user: str('Name of the User that owns the object.'),
    team: str('Name of the Team that owns the object.'),
  });
}

// ---- access rules ------------------------------------------------------------

/** Rights on this object for users and teams; turned into roles and role bindings. */
export interface AccessRule {
  name?: string;
  verbs: string[];
  subresources?: string[];
  users?: string[];
  teams?: string[];
}

// Atomic, items and all. A rule has no identity (its name is optional and need not
// be unique), and a rule is one grant: verbs x subresources x (users, teams).
// Merging two managers' partial rules, or letting one manager add a user to a rule
// another wrote, would grant rights neither of them applied. So whoever applies
// `access` owns the whole list, and a second manager setting it is a conflict.
export function accessRulesSchema(what: string): JSONSchema {
  return atomicList(
    `Rights other users and teams have on this ${what}. Each rule grants its verbs to its users and teams.`,
    obj(
      'One access rule: the verbs it grants, on which subresources, to which users and teams.',
      {
        name: str('Optional name of the rule, for people reading it.'),
        verbs: stringList(
          'Verbs the rule grants, such as `get`, `update` or `delete`; `*` grants every verb. Besides the usual verbs, `bind` and `makeowner` apply to users and teams. Required and non-empty.',
        ),
        subresources: stringList('Subresources the rule applies to; `*` means all of them.'),
        users: stringList('Names of the users the rule grants its verbs to; `*` means every user.'),
        teams: stringList('Names of the teams the rule grants its verbs to; `*` means every team.'),
      },
      { required: ['verbs'] },
    ),
  );
}

// ---- cluster roles -------------------------------------------------------------

export interface ClusterRoleRef {
  name?: string;
}

// Atomic: an entry's only field, its name, is optional, so entries have no key to
// merge by (a list-map needs every item to carry its keys).
export function clusterRolesSchema(who: string): JSONSchema {
  return atomicList(
    `Cluster roles assigned to ${who} in the connected clusters.`,
    obj('A reference to a cluster role.', {
      name: str('Name of the cluster role to assign.'),
    }),
  );
}

// ---- secret references -----------------------------------------------------------

/** A key in a Kubernetes secret. */
export interface SecretRef {
  secretName?: string;
  secretNamespace?: string;
  key?: string;
}

/** A key in a secret of some kind (a Kubernetes Secret or a SharedSecret). */
export interface KindSecretRef extends SecretRef {
  apiGroup?: string;
  kind?: string;
}

// Atomic, as Kubernetes' own references are (`+structType=atomic`): name, namespace
// and key point at one value together; mixing parts from two managers would point
// at something neither meant.
export function secretRefSchema(description: string): JSONSchema {
  return atomicObj(description, {
    secretName: str('Name of the secret.'),
    secretNamespace: str('Namespace of the secret.'),
    key: str('Key inside the secret that holds the value.'),
  });
}

// Atomic: references have no required identity (any of their fields may be empty).
export function imagePullSecretsSchema(who: string): JSONSchema {
  return atomicList(
    `Image pull secrets ${who} can use.`,
    obj('A reference to a key in a secret of a given kind.', {
      apiGroup: str('API group of the secret kind; empty for Kubernetes Secrets.'),
      kind: str('Kind of the secret, such as `Secret` or `SharedSecret`.'),
      secretName: str('Name of the secret.'),
      secretNamespace: str('Namespace of the secret.'),
      key: str('Key inside the secret that holds the image pull credentials.'),
    }),
  );
}

// ---- access-key scope ---------------------------------------------------------------

/** Role names a scope may grant (upstream constants; `platformCLI` is the neutral name of the CLI role). */
export const SCOPE_ROLE_NAMES = [
  'agent',
  'vcluster',
  'network-peer',
  'platformCLI',
  'workspace',
  'metrics-writer',
  'metrics-reader',
] as const;

export const REQUEST_TARGETS = ['Management', 'Cluster', 'ProjectSpace', 'ProjectVirtualCluster'] as const;

export interface AccessKeyScopeRole {
  role?: string;
  projects?: string[];
  virtualClusters?: string[];
}

export interface AccessKeyScopeProject {
  project?: string;
}

export interface AccessKeyScopeSpace {
  project?: string;
  space?: string;
}

export interface AccessKeyScopeVirtualCluster {
  project?: string;
  virtualCluster?: string;
}

export interface AccessKeyScopeCluster {
  cluster?: string;
}

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface AccessKeyVirtualCluster {
  name?: string;
  namespace?: string;
}

export interface AccessKeyScopeRule {
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  requestTargets?: string[];
  cluster?: string;
  virtualClusters?: AccessKeyVirtualCluster[];
}

/** What a key may reach. A scope only narrows what its owner may do; it never widens it. */
export interface AccessKeyScope {
  roles?: AccessKeyScopeRole[];
  projects?: AccessKeyScopeProject[];
  spaces?: AccessKeyScopeSpace[];
  virtualClusters?: AccessKeyScopeVirtualCluster[];
  clusters?: AccessKeyScopeCluster[];
  rules?: AccessKeyScopeRule[];
  allowPlatformCli?: boolean;
}

function scopeRuleSchema(): JSONSchema {
  return obj('A request rule of a key scope (deprecated: use projects, spaces and virtualClusters).', {
    verbs: stringList('Verbs the rule matches; empty means every verb.'),
    resources: atomicList(
      'Resources the rule matches; empty means every resource in every API group.',
      obj('Resources of one API group.', {
        group: str('API group of the resources; the empty string is the core group.'),
        resources: stringList(
          'Resource patterns: a resource name, `name/subresource`, `*`, `name/*` or `*/subresource`. Empty means every resource of the group. Wildcard entries must not overlap others.',
        ),
        resourceNames: stringList(
          'Names of the objects the rule matches; requires resources. Empty means every object.',
        ),
      }),
    ),
    namespaces: stringList(
      'Namespaces the rule matches; the empty string matches cluster-scoped resources, an empty list every namespace.',
    ),
    nonResourceURLs: stringList(
      'URL paths that are not resources, such as `/version`; `*` only as the whole last step.',
    ),
    requestTargets: atomicList(
      'Kinds of request the rule matches; empty means every request.',
      enumOf('A kind of request.', REQUEST_TARGETS),
    ),
    cluster: str(
      'When set, the rule only allows requests to this connected cluster; empty means no restriction.',
    ),
    virtualClusters: atomicList(
      'Virtual clusters the rule allows; empty means no restriction.',
      obj('A virtual cluster by name and namespace.', {
        name: str('Name of the virtual cluster; empty means all.'),
        namespace: str('Namespace of the virtual cluster; empty means all.'),
      }),
    ),
  });
}

// The whole scope is atomic: it is one security decision. Were its lists owned
// separately, one manager dropping its part (projects, say) would widen what the
// key may reach while another manager's part stays, and an empty scope does not
// limit the key at all. Whoever applies `scope` owns all of it.
export function accessKeyScopeSchema(): JSONSchema {
  return atomicObj(
    'Limits what the key may reach. A scope only narrows what the key owner may do; it never widens it. An empty scope does not limit the key.',
    {
      roles: atomicList(
        'Managed permissions the key grants, each optionally limited to projects and virtual clusters.',
        obj('A managed role of the key.', {
          role: enumOf(
            'Name of the role: `agent`, `vcluster`, `network-peer`, `platformCLI`, `workspace`, `metrics-writer` or `metrics-reader`. `vcluster` and `agent` imply `network-peer`.',
            SCOPE_ROLE_NAMES,
          ),
          projects: stringList('Projects the role applies to; `*` means every project.'),
          virtualClusters: stringList('Virtual clusters the role applies to.'),
        }),
      ),
      projects: atomicList(
        'Projects the key may access.',
        obj('A project reference.', {
          project: str('Name of the project; `*` selects every project.'),
        }),
      ),
      spaces: atomicList(
        'Spaces the key may access.',
        obj('A space in a project.', {
          project: str('Name of the project; `*` selects every project.'),
          space: str('Name of the space; `*` selects every space of the project.'),
        }),
      ),
      virtualClusters: atomicList(
        'Virtual clusters the key may access.',
        obj('A virtual cluster in a project.', {
          project: str('Name of the project; `*` selects every project.'),
          virtualCluster: str(
            'Name of the virtual cluster; `*` selects every virtual cluster of the project.',
          ),
        }),
      ),
      clusters: atomicList(
        'Project clusters the key may access.',
        obj('A cluster reference.', {
          cluster: str('Name of the cluster; `*` selects every cluster.'),
        }),
      ),
      rules: atomicList(
        'Deprecated request rules; use projects, spaces and virtualClusters instead.',
        scopeRuleSchema(),
      ),
      allowPlatformCli: bool(
        'Deprecated: allows the read-only management requests the command-line client needs. Use a `platformCLI` entry in roles instead.',
      ),
    },
  );
}

// ---- identity and OIDC -------------------------------------------------------------

/** Single sign-on login data of a key. `connectorData` is accepted but never returned. */
export interface AccessKeyIdentity {
  userId?: string;
  username?: string;
  preferredUsername?: string;
  email?: string;
  emailVerified?: boolean;
  extraClaims?: Record<string, string[]>;
  groups?: string[];
  connector?: string;
  connectorData?: string;
  identityRefresh?: string;
}

export interface AccessKeyOIDCProvider {
  clientId?: string;
  nonce?: string;
  redirectUri?: string;
  scopes?: string;
}

export interface AccessKeyOIDC {
  idToken?: string;
  accessToken?: string;
  refreshToken?: string;
  lastRefresh?: string;
}

export function identitySchema(): JSONSchema {
  return obj('Single sign-on login data for the key, when the key came from such a login.', {
    userId: str('Subject of the user at the identity provider.'),
    username: str('User name at the identity provider.'),
    preferredUsername: str('Preferred user name or display name at the identity provider.'),
    email: str('Email address of the user.'),
    emailVerified: bool('True when the identity provider verified the email address.'),
    extraClaims: {
      type: 'object',
      description:
        'Additional claims of the login; only claims the authentication configuration allows are kept.',
      additionalProperties: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
    },
    groups: stringSet('Groups the identity provider reported for the user.'),
    connector: str('Connector the key was created from.'),
    connectorData: bytes(
      'Data the connector needs for later requests, such as upstream tokens. Write only: it is never returned to users, clients or through the API.',
    ),
    identityRefresh: dateTime('When the identity was last refreshed.'),
  });
}

export function oidcProviderSchema(): JSONSchema {
  return obj('Information about the refresh token, when the key is one.', {
    clientId: str('Client the token was issued for.'),
    nonce: str('Nonce of the authorization request.'),
    redirectUri: str('Redirect URI of the authorization request.'),
    scopes: str('Scopes of the authorization request.'),
  });
}

export function oidcLoginSchema(): JSONSchema {
  return obj('Deprecated: use identity. OIDC tokens of the login that created the key.', {
    idToken: bytes('ID token issued at login.'),
    accessToken: bytes('Access token issued at login.'),
    refreshToken: bytes('Refresh token issued at login.'),
    lastRefresh: dateTime('When the tokens were last refreshed.'),
  });
}

// ---- conditions -----------------------------------------------------------------------

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  severity?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

// A map keyed by `type`, as upstream's conditions: each condition is owned by the
// controller that reports it.
export function conditionsSchema(what: string): JSONSchema {
  return listMap(
    `Observations of the current state of the ${what}, one per condition type.`,
    obj(
      'One aspect of the current state.',
      {
        type: str('Type of the condition, in CamelCase, such as `Ready`.'),
        status: enumOf('Whether the condition holds: `True`, `False` or `Unknown`.', [
          'True',
          'False',
          'Unknown',
        ]),
        severity: str('How bad it is when the condition does not hold: `Error`, `Warning` or `Info`.'),
        lastTransitionTime: dateTime('When the status last changed.'),
        reason: str('Machine-readable reason for the last transition, in CamelCase.'),
        message: str('Human-readable details of the last transition.'),
        observedGeneration: int64('The metadata.generation the condition was computed from.'),
      },
      { required: ['type', 'status'] },
    ),
    ['type'],
  );
}

// ---- the envelope ------------------------------------------------------------------------

/** A kind's object with typed spec and status. */
export interface TypedObject<Spec, Status> extends KubeObject {
  spec?: Spec;
  status?: Status;
}

/** The whole schema of a kind: apiVersion, kind, metadata, spec and status. */
export function kindSchema(description: string, spec: JSONSchema, status: JSONSchema): JSONSchema {
  return obj(description, {
    apiVersion: str(
      'Versioned schema of this representation of the object: `<group>/v1`. The server fills it in when omitted.',
    ),
    kind: str('Kind of the object, in CamelCase. The server fills it in when omitted; it cannot be changed.'),
    metadata: { ...objectMetaSchema(), description: 'Standard object metadata.' },
    spec,
    status,
  });
}

/** Names and verbs of a stored kind of this group. */
export function storedKindInfo(
  group: string,
  names: { resource: string; singular: string; kind: string; namespaced: boolean },
): ResourceInfo {
  return {
    group,
    version: VERSION,
    resource: names.resource,
    singular: names.singular,
    kind: names.kind,
    listKind: `${names.kind}List`,
    namespaced: names.namespaced,
    shortNames: [],
    categories: [],
    verbs: STORED_KIND_VERBS,
    subresources: [],
  };
}
