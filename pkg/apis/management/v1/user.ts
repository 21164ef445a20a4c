// User (cluster scoped): an identity that can sign in to the platform. Disabling a
// user stops the user's logins and keys; bumping tokenGeneration invalidates every
// token issued to the user so far.

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessRulesSchema,
  clusterRolesSchema,
  imagePullSecretsSchema,
  kindSchema,
  ownerSchema,
  secretRefSchema,
  storedKindInfo,
  type AccessRule,
  type ClusterRoleRef,
  type KindSecretRef,
  type SecretRef,
  type TypedObject,
  type UserOrTeam,
} from './common.js';
import { bool, int64, obj, str, stringSet, type JSONSchema } from './schema-builders.js';

export interface UserSpec {
  displayName?: string;
  description?: string;
  owner?: UserOrTeam;
  username?: string;
  icon?: string;
  email?: string;
  subject?: string;
  groups?: string[];
  ssoGroups?: string[];
  passwordRef?: SecretRef;
  codesRef?: SecretRef;
  imagePullSecrets?: KindSecretRef[];
  tokenGeneration?: number;
  disabled?: boolean;
  clusterRoles?: ClusterRoleRef[];
  access?: AccessRule[];
  extraClaims?: Record<string, string>;
}

export interface UserStatus {
  /** Teams the user belongs to, computed by the server. */
  teams?: string[];
}

export type User = TypedObject<UserSpec, UserStatus>;

export function userInfo(group: string): ResourceInfo {
  return storedKindInfo(group, { resource: 'users', singular: 'user', kind: 'User', namespaced: false });
}

export function userSchema(): JSONSchema {
  return kindSchema(
    'User is an identity that can access the platform.',
    obj('Desired state of the user: how the user signs in and what the user gets.', {
      displayName: str('Name shown in the UI.'),
      description: str('Describes the user.'),
      owner: ownerSchema(),
      username: str('Name the user signs in with.'),
      icon: str('URL of an icon shown for the user.'),
      email: str('Email address of the user.'),
      subject: str('Subject of the user as presented in authentication tokens.'),
      // Sets: groups are added and removed one by one, by admins and by single sign-on.
      groups: stringSet('Groups the user belongs to.'),
      ssoGroups: stringSet(
        'Groups remembered from single sign-on, so they can be removed again on the next login.',
      ),
      passwordRef: secretRefSchema('Where the password of the user is kept.'),
      codesRef: secretRefSchema('Where the access codes of the user are kept.'),
      imagePullSecrets: imagePullSecretsSchema('the user'),
      tokenGeneration: int64(
        'Generation of the tokens issued to the user. Increasing it invalidates every token issued before. Must not be negative.',
      ),
      disabled: bool(
        'When true the user can no longer sign in and the keys of the user stop working; other objects and users are unaffected.',
      ),
      clusterRoles: clusterRolesSchema('the user'),
      access: accessRulesSchema('user'),
      extraClaims: {
        type: 'object',
        description:
          'Additional claims an administrator added to the user. Single sign-on does not update them; they change only when edited here.',
        additionalProperties: { type: 'string' },
      },
    }),
    obj(
      'Observed state of the user. Written through the status subresource; writes to the main resource keep it as stored.',
      {
        teams: stringSet('Names of the teams the user belongs to.'),
      },
    ),
  );
}
