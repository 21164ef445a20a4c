// Teams and Users: the lists the caller may see, and detail pages (members, groups,
// the teams a user is in from status.teams). Edits (including cluster roles) send only
// the fields whose text the user changed in the form (form-edits.ts), each tested
// against its value as shown (a guarded JSON Patch, field-patch.ts); the server decides
// who may make them and says why not.
// Detail pages follow their object live.

import type { KubeObject } from '../api.js';
import type { View } from '../context.js';
import { h, replace, table } from '../dom.js';
import { link } from '../router.js';
import {
  confirmButton,
  dash,
  facts,
  list,
  liveDetail,
  livePage,
  nameCell,
  shownEditor,
  specField,
  textForm,
} from './common.js';
import {
  editedFields,
  newTeamSpec,
  newUserSpec,
  teamFormFields,
  userFormFields,
  type SpecFormField,
  type TeamFormSpec,
  type UserFormSpec,
} from './form-edits.js';

interface TeamSpec extends TeamFormSpec {
  username?: string;
}

interface UserSpec extends UserFormSpec {
  username?: string;
  disabled?: boolean;
  tokenGeneration?: number;
}

type Team = KubeObject<TeamSpec>;
type User = KubeObject<UserSpec, { teams?: string[] }>;

/** A form's text fields as textForm takes them, each showing its stored value. */
function inputs(fields: readonly SpecFormField[]) {
  return fields.map((f) => ({ id: f.id, label: f.label, value: f.shown }));
}

/** "Disable" and "Enable" set the switch whatever it holds now. */
function state(disabled: boolean) {
  return specField('disabled', 'State', disabled, false);
}

export const teamsView: View = async (ctx, main) => {
  const body = h('div', {});
  const create = textForm(
    'Create team',
    [
      { id: 'new-team-name', label: 'Name', required: true },
      { id: 'new-team-display-name', label: 'Display name' },
      { id: 'new-team-users', label: 'Members (comma separated)' },
    ],
    'Create',
    async (v) => {
      const name = v['new-team-name'] ?? '';
      const spec = newTeamSpec(v['new-team-display-name'], v['new-team-users']);
      await ctx.api.post('/teams', { metadata: { name }, spec });
      ctx.go(link('teams', name));
    },
  );
  replace(main, body, create);
  await livePage<Team>(ctx, body, 'Teams', '/teams', (items) => {
    if (items.length === 0) return [h('p', {}, 'No teams you may see.')];
    const rows = items.map((t) => [
      nameCell(h('a', { href: link('teams', t.metadata.name) }, t.metadata.name), t.metadata),
      dash(t.spec?.displayName),
      String(t.spec?.users?.length ?? 0),
      (t.spec?.groups ?? []).join(', ') || '—',
    ]);
    return [h('div', { class: 'table-wrap' }, table(['Name', 'Display name', 'Members', 'Groups'], rows))];
  });
};

export const teamView: View = async (ctx, main, [name = '']) => {
  const path = `/teams/${encodeURIComponent(name)}`;
  await liveDetail<Team>(ctx, main, {
    title: `Team ${name}`,
    back: [h('a', { href: link('teams') }, 'All teams')],
    collectionPath: '/teams',
    name,
    render: (shown) => {
      const team = shown.object;
      const { save } = shownEditor(ctx, path, shown);
      const fields = teamFormFields(team.spec);
      const form = textForm('Edit team', inputs(fields), 'Save', (v) => save(editedFields(fields, v))());
      return [
        facts([
          ['Display name', dash(team.spec?.displayName)],
          ['Description', dash(team.spec?.description)],
          ['Username', dash(team.spec?.username)],
          ['Members', list(team.spec?.users)],
          ['Groups', list(team.spec?.groups)],
          ['Cluster roles', list(team.spec?.clusterRoles?.map((r) => r.name ?? ''))],
        ]),
        form,
      ];
    },
  });
};

export const usersView: View = async (ctx, main) => {
  const body = h('div', {});
  const create = textForm(
    'Create user',
    [
      { id: 'new-user-name', label: 'Name', required: true },
      { id: 'new-user-display-name', label: 'Display name' },
      { id: 'new-user-email', label: 'Email' },
    ],
    'Create',
    async (v) => {
      const name = v['new-user-name'] ?? '';
      const spec = newUserSpec(name, v['new-user-display-name'], v['new-user-email']);
      await ctx.api.post('/users', { metadata: { name }, spec });
      ctx.go(link('users', name));
    },
  );
  replace(main, body, create);
  await livePage<User>(ctx, body, 'Users', '/users', (items) => {
    if (items.length === 0) return [h('p', {}, 'No users you may see.')];
    const rows = items.map((u) => [
      nameCell(h('a', { href: link('users', u.metadata.name) }, u.metadata.name), u.metadata),
      dash(u.spec?.displayName),
      dash(u.spec?.email),
      (u.status?.teams ?? []).join(', ') || '—',
      u.spec?.disabled ? 'disabled' : 'active',
    ]);
    return [
      h('div', { class: 'table-wrap' }, table(['Name', 'Display name', 'Email', 'Teams', 'State'], rows)),
    ];
  });
};

export const userView: View = async (ctx, main, [name = '']) => {
  const path = `/users/${encodeURIComponent(name)}`;
  await liveDetail<User>(ctx, main, {
    title: `User ${name}`,
    back: [h('a', { href: link('users') }, 'All users')],
    collectionPath: '/users',
    name,
    render: (shown) => {
      const user = shown.object;
      const { alert, save, fail } = shownEditor(ctx, path, shown);
      const userFields = userFormFields(user.spec);
      return [
        facts([
          ['Display name', dash(user.spec?.displayName)],
          ['Username', dash(user.spec?.username)],
          ['Email', dash(user.spec?.email)],
          ['Groups', list(user.spec?.groups)],
          ['Teams', list(user.status?.teams)],
          ['Cluster roles', list(user.spec?.clusterRoles?.map((r) => r.name ?? ''))],
          ['State', user.spec?.disabled ? 'disabled' : 'active'],
        ]),
        textForm('Edit user', inputs(userFields), 'Save', (v) => save(editedFields(userFields, v))()),
        h(
          'div',
          { class: 'actions' },
          user.spec?.disabled
            ? confirmButton('Enable', `Enable user ${name}?`, save([state(false)]), fail)
            : confirmButton('Disable', `Disable user ${name}?`, save([state(true)]), fail),
          ' ',
          confirmButton(
            'Sign out everywhere',
            `End every access key of ${name}?`,
            // Guarded: two sign-outs from one version raise the generation once, not twice.
            save([specField('tokenGeneration', 'Token generation', (user.spec?.tokenGeneration ?? 0) + 1)]),
            fail,
          ),
        ),
        alert.el,
      ];
    },
  });
};
