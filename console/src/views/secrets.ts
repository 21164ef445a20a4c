// Global Secrets (SharedSecret): every one the caller may see across namespaces, and a
// secret's page with its details (display name, description, owner: editable), its
// keys, values hidden until "Reveal", and adding, editing and
// removing key-value pairs (only what changed is saved, each field and each key tested
// against its shown value, so a concurrent change of the same one is refused instead of
// overwritten, and a change elsewhere is neither). The page follows the secret live.

import { messageOf, type KubeObject } from '../api.js';
import type { View } from '../context.js';
import { alertBox, button, field, h, replace, table } from '../dom.js';
import type { FieldChange } from '../field-patch.js';
import { link } from '../router.js';
import {
  confirmButton,
  dash,
  facts,
  liveDetail,
  livePage,
  nameCell,
  shownEditor,
  specField,
  splitList,
  textForm,
  validationMessages,
  type Shown,
} from './common.js';

interface SecretSpec {
  displayName?: string;
  description?: string;
  owner?: { user?: string; team?: string };
  data?: Record<string, string>;
  access?: AccessRule[];
}

interface AccessRule {
  users?: string[];
  teams?: string[];
  verbs?: string[];
  subresources?: string[];
}

type SharedSecret = KubeObject<SecretSpec>;

function secretPath(ns: string, name: string): string {
  return `/namespaces/${encodeURIComponent(ns)}/sharedsecrets/${encodeURIComponent(name)}`;
}

/** A value as stored (base64 of bytes) shown as UTF-8 text. */
export function decodeValue(b64: string): string {
  try {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  } catch {
    return b64;
  }
}

export function encodeValue(text: string): string {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** What a form changed, field by field: each key of `data` apart, values never named in a message. */
function specChanges(before: SecretSpec, after: SecretSpec): FieldChange[] {
  const edits: FieldChange[] = [];
  const labels: Record<string, string> = {
    displayName: 'Display name',
    description: 'Description',
    owner: 'Owner',
    access: 'Access rules',
  };
  for (const [field, label] of Object.entries(labels)) {
    edits.push(specField(field, label, (after as Record<string, unknown>)[field] ?? null));
  }
  const data = after.data ?? {};
  for (const key of new Set([...Object.keys(before.data ?? {}), ...Object.keys(data)])) {
    edits.push({
      path: ['spec', 'data', key],
      value: data[key] ?? null,
      label: `Key ${key}`,
      secret: true,
      exact: true,
    });
  }
  return edits;
}

function ownerText(owner: SecretSpec['owner']): string {
  if (owner?.user) return `user ${owner.user}`;
  if (owner?.team) return `team ${owner.team}`;
  return '—';
}

export const secretsView: View = async (ctx, main) => {
  const body = h('div', {});
  const create = textForm(
    'Create Global Secret',
    [
      { id: 'secret-namespace', label: 'Namespace', required: true },
      { id: 'secret-name', label: 'Name', required: true },
      { id: 'secret-display-name', label: 'Display name' },
    ],
    'Create',
    async (v) => {
      const ns = v['secret-namespace'] ?? '';
      const name = v['secret-name'] ?? '';
      const spec: SecretSpec = { displayName: v['secret-display-name'] };
      if (ctx.self.user) spec.owner = { user: ctx.self.user.name };
      else if (ctx.self.team) spec.owner = { team: ctx.self.team.name };
      await ctx.api.post(`/namespaces/${encodeURIComponent(ns)}/sharedsecrets`, { metadata: { name }, spec });
      ctx.go(link('secrets', ns, name));
    },
  );
  replace(main, body, create);
  await livePage<SharedSecret>(ctx, body, 'Global Secrets', '/sharedsecrets', (items) => {
    if (items.length === 0) return [h('p', {}, 'No Global Secrets you may see.')];
    const rows = items.map((s) => [
      s.metadata.namespace ?? '',
      nameCell(
        h('a', { href: link('secrets', s.metadata.namespace ?? '', s.metadata.name) }, s.metadata.name),
        s.metadata,
      ),
      dash(s.spec?.displayName),
      String(Object.keys(s.spec?.data ?? {}).length),
    ]);
    return [h('div', { class: 'table-wrap' }, table(['Namespace', 'Name', 'Display name', 'Keys'], rows))];
  });
};

export const secretView: View = async (ctx, main, [ns = '', name = '']) => {
  const path = secretPath(ns, name);
  // Which values the user revealed: a live update redraws the page and keeps them shown.
  const revealed = new Set<string>();
  const render = ({ object: secret, saved }: Shown<SharedSecret>) => {
    const data = secret.spec?.data ?? {};
    const rowsAlert = alertBox();
    const formAlert = h('div', { role: 'alert', class: 'alert', hidden: true });
    const keyInput = h('input', { type: 'text', required: true, autocomplete: 'off' });
    const valueInput = h('textarea', { rows: 3, autocomplete: 'off' });
    const showErrors = (lines: string[]) => {
      replace(formAlert, ...lines.map((l) => h('p', {}, l)));
      formAlert.hidden = lines.length === 0;
    };
    const { save } = shownEditor(ctx, path, { object: secret, saved });
    /**
     * Changes the spec of the secret as shown and saves what changed, each field
     * guarded by its shown value (a key of `data` on its own, so that keys added or
     * changed elsewhere meanwhile neither refuse the save nor are undone by it).
     */
    const changeSpec = async (edit: (spec: SecretSpec) => void) => {
      const next: SecretSpec = structuredClone(secret.spec ?? {});
      edit(next);
      await save(specChanges(secret.spec ?? {}, next))();
    };
    const change = (edit: (data: Record<string, string>) => void) =>
      changeSpec((spec) => {
        const next = { ...(spec.data ?? {}) };
        edit(next);
        spec.data = next;
      });
    const rules = (secret.spec?.access ?? []).map((rule, i) => [
      (rule.users ?? []).join(', ') || '—',
      (rule.teams ?? []).join(', ') || '—',
      (rule.verbs ?? []).join(', ') || '—',
      confirmButton(
        'Remove',
        `Remove access rule ${i + 1}?`,
        () => changeSpec((spec) => spec.access?.splice(i, 1)),
        (e) => rowsAlert.show(messageOf(e)),
      ),
    ]);
    const details = textForm(
      'Edit details',
      [
        { id: 'secret-edit-display-name', label: 'Display name', value: secret.spec?.displayName ?? '' },
        { id: 'secret-edit-description', label: 'Description', value: secret.spec?.description ?? '' },
        { id: 'secret-edit-owner-user', label: 'Owner: user', value: secret.spec?.owner?.user ?? '' },
        { id: 'secret-edit-owner-team', label: 'Owner: team', value: secret.spec?.owner?.team ?? '' },
      ],
      'Update details',
      (v) =>
        changeSpec((spec) => {
          spec.displayName = v['secret-edit-display-name'] || undefined;
          spec.description = v['secret-edit-description'] || undefined;
          // Only the members set: {user: 'bob'} is what the server holds, and an
          // undefined team beside it would read as a change of the owner to test and save.
          const owner: NonNullable<SecretSpec['owner']> = {};
          const user = v['secret-edit-owner-user'];
          const team = v['secret-edit-owner-team'];
          if (user) owner.user = user;
          if (team) owner.team = team;
          spec.owner = user || team ? owner : undefined;
        }),
    );
    const addRule = textForm(
      'Add access rule',
      [
        { id: 'rule-users', label: 'Users (comma separated, * for everyone)' },
        { id: 'rule-teams', label: 'Teams (comma separated)' },
        { id: 'rule-verbs', label: 'Verbs (comma separated: get, update, *)', required: true },
      ],
      'Add rule',
      (v) =>
        changeSpec((spec) => {
          const rule: AccessRule = { verbs: splitList(v['rule-verbs'] ?? '') };
          const users = splitList(v['rule-users'] ?? '');
          const teams = splitList(v['rule-teams'] ?? '');
          if (users.length) rule.users = users;
          if (teams.length) rule.teams = teams;
          spec.access = [...(spec.access ?? []), rule];
        }),
    );
    const rows = Object.keys(data)
      .sort()
      .map((key) => {
        const value = h('code', { class: 'secret-value' });
        const reveal = button(
          '',
          () => {
            if (revealed.has(key)) revealed.delete(key);
            else revealed.add(key);
            paint();
          },
          { 'aria-label': `Reveal ${key}` },
        );
        const paint = () => {
          const shown = revealed.has(key);
          value.textContent = shown ? decodeValue(data[key] ?? '') : '••••••••';
          reveal.textContent = shown ? 'Hide' : 'Reveal';
        };
        paint();
        const edit = button(
          'Edit',
          () => {
            keyInput.value = key;
            valueInput.value = decodeValue(data[key] ?? '');
            valueInput.focus();
          },
          // It fills the form: an edit, turned off while the secret is being deleted.
          { 'aria-label': `Edit ${key}`, 'data-edit': true },
        );
        const remove = confirmButton(
          'Remove',
          `Remove key ${key}?`,
          () => change((d) => delete d[key]),
          (e) => rowsAlert.show(messageOf(e)),
        );
        return [key, value, h('span', { class: 'row-actions' }, reveal, ' ', edit, ' ', remove)];
      });
    const form = h(
      'form',
      { class: 'card', 'aria-label': 'Add or edit a key' },
      h('h2', {}, 'Add or edit a key'),
      field('Key', 'secret-key', keyInput),
      field('Value', 'secret-value', valueInput),
      h('button', { type: 'submit' }, 'Save'),
      formAlert,
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      showErrors([]);
      const key = keyInput.value.trim();
      const value = encodeValue(valueInput.value);
      change((d) => {
        d[key] = value;
      }).catch((err: unknown) => showErrors(validationMessages(err)));
    });
    return [
      facts([
        ['Namespace', ns],
        ['Display name', dash(secret.spec?.displayName)],
        ['Description', dash(secret.spec?.description)],
        ['Owner', ownerText(secret.spec?.owner)],
      ]),
      details,
      h('h2', {}, 'Keys'),
      rowsAlert.el,
      rows.length
        ? h('div', { class: 'table-wrap' }, table(['Key', 'Value', 'Actions'], rows))
        : h('p', {}, 'No keys yet.'),
      form,
      h('h2', {}, 'Access rules'),
      rules.length
        ? h('div', { class: 'table-wrap' }, table(['Users', 'Teams', 'Verbs', 'Actions'], rules))
        : h('p', {}, 'No access rules: only the owner and administrators may use this secret.'),
      addRule,
    ];
  };
  await liveDetail<SharedSecret>(ctx, main, {
    title: `Global Secret ${name}`,
    back: [h('a', { href: link('secrets') }, 'All Global Secrets')],
    collectionPath: `/namespaces/${encodeURIComponent(ns)}/sharedsecrets`,
    name,
    render,
  });
};
