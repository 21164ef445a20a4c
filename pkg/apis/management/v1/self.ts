// Self (cluster scoped, create only, never stored): who the caller is. A POST to
// `selves` answers with the caller's user (or team), the teams it belongs to, its
// groups, and the name, type and scope of the access key in use. The command-line
// client checks a key this way, and a virtual cluster checks that its key carries
// the roles it needs. Also the kinds of the `accesskeys` subresources of users and
// teams: the keys an owner has, with every key value empty.

import type { ResourceInfo } from '../../meta/resource-info.js';
import { accessKeyScopeSchema, kindSchema, type AccessKeyScope } from './common.js';
import { ownedAccessKeySchema, type OwnedAccessKey } from './owned-access-key.js';
import { atomicList, obj, str, stringList, type JSONSchema } from './schema-builders.js';

/** A user or team as Self names it. */
export interface EntityInfo {
  name: string;
  displayName?: string;
  username?: string;
  email?: string;
  icon?: string;
  subject?: string;
}

export interface SelfUserInfo extends EntityInfo {
  teams?: EntityInfo[];
}

export interface SelfStatus {
  user?: SelfUserInfo;
  team?: EntityInfo;
  accessKey?: string;
  accessKeyType?: string;
  accessKeyScope?: AccessKeyScope;
  /** The name the caller authenticated as. */
  subject?: string;
  groups?: string[];
  /**
   * Prefix of project namespaces on this server (--project-namespace-prefix):
   * project P's virtual cluster instances live in `<prefix>P`. Clients such as
   * `platform connect` build the namespace from it instead of assuming `p-`.
   */
  projectNamespacePrefix?: string;
}

export interface Self {
  apiVersion: string;
  kind: 'Self';
  metadata: { creationTimestamp?: string | null };
  spec: Record<string, never>;
  status: SelfStatus;
}

export function selfInfo(group: string): ResourceInfo {
  return {
    group,
    version: 'v1',
    resource: 'selves',
    singular: 'self',
    kind: 'Self',
    listKind: 'SelfList',
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
  };
}

function entitySchema(what: string): JSONSchema {
  return obj(`The ${what}.`, {
    name: str('Name of the object.'),
    displayName: str('Name shown in the UI.'),
    username: str('Name used to log in or to identify the team.'),
    email: str('Email address.'),
    icon: str('URL of an icon.'),
    subject: str('Subject as presented in authentication tokens.'),
  });
}

export function selfSchema(): JSONSchema {
  const user = entitySchema('user the caller is');
  (user['properties'] as Record<string, JSONSchema>)['teams'] = atomicList(
    'Teams the user belongs to.',
    entitySchema('team'),
  );
  return kindSchema(
    'Self tells the caller who they are: create one (POST, any body) and read status.',
    obj('Nothing to set.', {}),
    obj('Who the caller is.', {
      user: user,
      team: entitySchema('team the caller is (when using a team access key)'),
      accessKey: str('Name of the access key in use.'),
      accessKeyType: str('Type of the access key in use.'),
      accessKeyScope: accessKeyScopeSchema(),
      subject: str('The name the caller authenticated as.'),
      groups: stringList('Groups of the caller.'),
      projectNamespacePrefix: str(
        'Prefix of project namespaces on this server: the virtual cluster instances of project P live in namespace <prefix>P.',
      ),
    }),
  );
}

/** `users/<name>/accesskeys` and `teams/<name>/accesskeys`: the keys an owner has. */
export interface OwnerAccessKeys {
  apiVersion: string;
  kind: 'UserAccessKeys' | 'TeamAccessKeys';
  metadata: { name: string };
  accessKeys: OwnedAccessKey[];
}

export function ownerAccessKeysSchema(owner: 'user' | 'team'): JSONSchema {
  return obj(`The access keys of a ${owner}. Key values are always empty.`, {
    apiVersion: str('`<group>/v1`.'),
    kind: str(owner === 'user' ? 'UserAccessKeys' : 'TeamAccessKeys'),
    metadata: obj('Names the owner.', { name: str(`Name of the ${owner}.`) }),
    accessKeys: atomicList(`The OwnedAccessKeys of the ${owner}.`, ownedAccessKeySchema()),
  });
}
