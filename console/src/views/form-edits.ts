// What a Team's or a User's form saves, apart from the DOM so that it is tested on its
// own. A form field shows a spec field as text (a list comma separated, a cluster role
// by its name), and that text does not always read back as the stored value: textForm
// trims what is submitted, a list entry that is '' or holds a comma, a cluster role
// entry without a name. So a field is saved only when its text was edited, never
// because its shown text reads back differently: a save of the description must not
// test and rewrite the members, nor drop a nameless cluster role entry nobody touched
// (the pattern of the Global Secret's owner, fixed before: see secrets.ts).

import type { FieldChange } from '../field-patch.js';

/** One text field of a form that edits one field of `spec`. */
export interface SpecFormField {
  readonly id: string;
  readonly label: string;
  /** The text the field shows for the stored value. */
  readonly shown: string;
  /** The change its submitted text makes (undefined or null removes the field). */
  readonly change: (text: string) => FieldChange;
}

/** "a, b ,c" -> ['a', 'b', 'c']: the comma-separated lists the forms take. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function specChange(name: string, label: string, value: unknown): FieldChange {
  return { path: ['spec', name], value, label };
}

/** A text field of `spec`; empty removes it. */
export function textField(
  id: string,
  label: string,
  name: string,
  stored: string | undefined,
): SpecFormField {
  return { id, label, shown: stored ?? '', change: (text) => specChange(name, label, text || null) };
}

/** A list of strings, edited comma separated; none removes it. */
export function listField(
  id: string,
  label: string,
  name: string,
  stored: readonly string[] | undefined,
): SpecFormField {
  return {
    id,
    label: `${label} (comma separated)`,
    shown: (stored ?? []).join(', '),
    change: (text) => {
      const items = splitList(text);
      return specChange(name, label, items.length ? items : null);
    },
  };
}

/** Cluster roles (atomic items `{ name }`), edited as their names comma separated; none removes them. */
export function clusterRolesField(
  id: string,
  stored: readonly { name?: string }[] | undefined,
): SpecFormField {
  return {
    id,
    label: 'Cluster roles (comma separated)',
    shown: (stored ?? []).map((r) => r.name ?? '').join(', '),
    change: (text) => {
      const names = splitList(text);
      return specChange(
        'clusterRoles',
        'Cluster roles',
        names.length ? names.map((name) => ({ name })) : null,
      );
    },
  };
}

/**
 * The text a one-line `<input>` holds when given `value`: HTML's value sanitization
 * strips line breaks (a description set with kubectl may hold them).
 */
export function asInputValue(value: string): string {
  return value.replace(/[\r\n]/g, '');
}

/**
 * The changes of the fields whose submitted text differs from what they showed (as
 * the input held it, trimmed, as textForm submits it): a field left as shown is never
 * sent, even one whose stored value the input could not hold exactly.
 */
export function editedFields(
  fields: readonly SpecFormField[],
  values: Readonly<Record<string, string>>,
): FieldChange[] {
  return fields.flatMap((f) => {
    const text = values[f.id] ?? '';
    return text === asInputValue(f.shown).trim() ? [] : [f.change(text)];
  });
}

/** What a team's and a user's forms both edit. */
interface SubjectFormSpec {
  displayName?: string;
  groups?: string[];
  clusterRoles?: { name?: string }[];
}

export interface TeamFormSpec extends SubjectFormSpec {
  description?: string;
  users?: string[];
}

/** The fields of a team's edit form. */
export function teamFormFields(spec: TeamFormSpec | undefined): SpecFormField[] {
  return [
    textField('team-display-name', 'Display name', 'displayName', spec?.displayName),
    textField('team-description', 'Description', 'description', spec?.description),
    listField('team-users', 'Members', 'users', spec?.users),
    listField('team-groups', 'Groups', 'groups', spec?.groups),
    clusterRolesField('team-cluster-roles', spec?.clusterRoles),
  ];
}

export interface UserFormSpec extends SubjectFormSpec {
  email?: string;
}

/** The fields of a user's edit form. */
export function userFormFields(spec: UserFormSpec | undefined): SpecFormField[] {
  return [
    textField('user-display-name', 'Display name', 'displayName', spec?.displayName),
    textField('user-email', 'Email', 'email', spec?.email),
    listField('user-groups', 'Groups', 'groups', spec?.groups),
    clusterRolesField('user-cluster-roles', spec?.clusterRoles),
  ];
}

/** A new team's spec: only the fields the form filled (an empty one is left out, not sent as '' or []). */
export function newTeamSpec(displayName: string | undefined, members: string | undefined): TeamFormSpec {
  const spec: TeamFormSpec = {};
  if (displayName) spec.displayName = displayName;
  const users = splitList(members ?? '');
  if (users.length) spec.users = users;
  return spec;
}

/** A new user's spec: the username is the name; display name and email only when filled. */
export function newUserSpec(
  name: string,
  displayName: string | undefined,
  email: string | undefined,
): UserFormSpec & { username: string } {
  const spec: UserFormSpec & { username: string } = { username: name };
  if (displayName) spec.displayName = displayName;
  if (email) spec.email = email;
  return spec;
}
