// Access Keys: the keys the caller may see (the server filters the list: their own
// and their teams', every key for administrators), creating one (its key shown once,
// held only in this page's memory), disabling, enabling and deleting with confirmation,
// and a key's page (live, its display name and description editable; never its key).

import { messageOf, type KubeObject } from '../api.js';
import type { Context, View } from '../context.js';
import { alertBox, button, field, h, replace, table as tableOf } from '../dom.js';
import { link } from '../router.js';
import {
  confirmButton,
  dash,
  facts,
  isBeingDeleted,
  liveDetail,
  livePage,
  nameCell,
  shownEditor,
  specField,
  splitList,
  textForm,
  when,
} from './common.js';

interface ScopeRole {
  role?: string;
  projects?: string[];
  virtualClusters?: string[];
}

interface Scope {
  roles?: ScopeRole[];
  projects?: { project?: string }[];
  spaces?: unknown[];
  virtualClusters?: { project?: string; virtualCluster?: string }[];
  clusters?: { cluster?: string }[];
  rules?: unknown[];
  allowPlatformCli?: boolean;
}

interface KeySpec {
  displayName?: string;
  description?: string;
  user?: string;
  team?: string;
  subject?: string;
  key?: string;
  type?: string;
  disabled?: boolean;
  ttl?: number;
  ttlAfterLastActivity?: boolean;
  scope?: Scope;
}

type AccessKey = KubeObject<KeySpec, { lastActivity?: string }>;

export function ownerOf(spec: KeySpec | undefined): string {
  if (spec?.user) return `user ${spec.user}`;
  if (spec?.team) return `team ${spec.team}`;
  if (spec?.subject) return `subject ${spec.subject}`;
  return '—';
}

/** One line per kind of scope entry; "full access" when the key has no scope. */
export function scopeSummary(scope: Scope | undefined): string {
  if (!scope) return 'full access';
  const parts: string[] = [];
  for (const r of scope.roles ?? []) {
    const where = [
      ...(r.projects ?? []).map((p) => `project ${p}`),
      ...(r.virtualClusters ?? []).map((v) => `vcluster ${v}`),
    ];
    parts.push(`role ${r.role ?? '?'}${where.length ? ` (${where.join(', ')})` : ''}`);
  }
  if (scope.allowPlatformCli) parts.push('platform CLI');
  if (scope.projects?.length)
    parts.push(`projects: ${scope.projects.map((p) => p.project ?? '?').join(', ')}`);
  if (scope.virtualClusters?.length) {
    parts.push(
      `virtual clusters: ${scope.virtualClusters.map((v) => `${v.project ?? '?'}/${v.virtualCluster ?? '?'}`).join(', ')}`,
    );
  }
  if (scope.spaces?.length) parts.push(`${scope.spaces.length} space(s)`);
  if (scope.clusters?.length)
    parts.push(`clusters: ${scope.clusters.map((c) => c.cluster ?? '?').join(', ')}`);
  if (scope.rules?.length) parts.push(`${scope.rules.length} rule(s)`);
  return parts.length ? parts.join('; ') : 'no access';
}

/** When the key stops working by its ttl, from creation or from its last activity. */
export function expiry(key: AccessKey): string {
  const ttl = key.spec?.ttl;
  if (!ttl) return 'never';
  const from = key.spec?.ttlAfterLastActivity
    ? (key.status?.lastActivity ?? key.metadata.creationTimestamp)
    : key.metadata.creationTimestamp;
  if (!from) return `${ttl} s`;
  return when(new Date(new Date(from).getTime() + ttl * 1000).toISOString());
}

/** The scope the form describes, or undefined for a key with its owner's full access. */
function scopeFrom(role: string, projects: string[], virtualClusters: string[]): Scope | undefined {
  if (role)
    return {
      roles: [
        {
          role,
          ...(projects.length ? { projects } : {}),
          ...(virtualClusters.length ? { virtualClusters } : {}),
        },
      ],
    };
  if (projects.length === 0 && virtualClusters.length === 0) return undefined;
  const scope: Scope = {};
  if (projects.length) scope.projects = projects.map((project) => ({ project }));
  if (virtualClusters.length) {
    scope.virtualClusters = virtualClusters.map((v) => {
      const [project, virtualCluster] = v.includes('/') ? v.split('/', 2) : ['', v];
      return { project, virtualCluster };
    });
  }
  return scope;
}

function createForm(ctx: Context, onCreated: (key: AccessKey) => void): HTMLElement {
  const displayName = h('input', { type: 'text', required: true });
  const ttl = h('input', { type: 'number', min: 1, step: 1, inputmode: 'numeric' });
  const role = h(
    'select',
    {},
    h('option', { value: '' }, 'none'),
    h('option', { value: 'vcluster' }, 'vcluster'),
    h('option', { value: 'platformCLI' }, 'platformCLI'),
  );
  const projects = h('input', { type: 'text', placeholder: 'p1, p2 or *' });
  const vclusters = h('input', { type: 'text', placeholder: 'project/name, ...' });
  const alert = alertBox();
  const submit = h('button', { type: 'submit' }, 'Create');
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Create Access Key' },
    h('h2', {}, 'Create Access Key'),
    field('Display name', 'key-display-name', displayName),
    field('TTL in seconds (optional)', 'key-ttl', ttl),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Scope (optional)'),
      field('Role', 'key-scope-role', role),
      field('Projects', 'key-scope-projects', projects),
      field('Virtual clusters', 'key-scope-vclusters', vclusters),
    ),
    submit,
    alert.el,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    alert.show(undefined);
    const spec: KeySpec = { displayName: displayName.value.trim(), type: 'User' };
    if (ctx.self.user) spec.user = ctx.self.user.name;
    else if (ctx.self.team) spec.team = ctx.self.team.name;
    else if (ctx.self.subject) spec.subject = ctx.self.subject;
    if (ttl.value) spec.ttl = Number(ttl.value);
    const scope = scopeFrom(role.value, splitList(projects.value), splitList(vclusters.value));
    if (scope) spec.scope = scope;
    submit.disabled = true;
    ctx.api
      .post<AccessKey>('/ownedaccesskeys', { metadata: { generateName: 'key-' }, spec })
      .then((created) => {
        form.reset();
        onCreated(created);
      })
      .catch((err: unknown) => alert.show(messageOf(err)))
      .finally(() => {
        submit.disabled = false;
      });
  });
  return form;
}

/** The new key, once: it lives only in this element, which a reload or a new page drops. */
function newKeyNotice(key: AccessKey): HTMLElement {
  const value = key.spec?.key ?? '';
  const out = h('code', { class: 'secret-value', 'aria-label': 'New access key' }, value);
  const copied = h('span', { 'aria-live': 'polite' });
  const copy = button('Copy', () => {
    navigator.clipboard
      .writeText(value)
      .then(() => (copied.textContent = 'Copied'))
      .catch(() => (copied.textContent = 'Copy failed: select the key and copy it'));
  });
  return h(
    'div',
    { role: 'status', class: 'card notice' },
    h(
      'p',
      {},
      `Access key "${key.spec?.displayName ?? key.metadata.name}" created. Copy it now: it is shown only once.`,
    ),
    out,
    ' ',
    copy,
    ' ',
    copied,
  );
}

export const accessKeysView: View = async (ctx, main) => {
  const notice = h('div', {});
  const rowsAlert = alertBox();
  const body = h('div', {});
  let reload: () => Promise<void> = () => Promise.resolve();
  const fail = (e: unknown) => rowsAlert.show(messageOf(e));
  const render = (items: AccessKey[]) => {
    const rows = items.map((k) => {
      const name = k.metadata.name;
      const keyPath = `/ownedaccesskeys/${encodeURIComponent(name)}`;
      const setDisabled = (disabled: boolean) => async () => {
        await ctx.api.mergePatch(keyPath, { spec: { disabled } });
        await reload();
      };
      const remove = async () => {
        await ctx.api.delete(keyPath);
        await reload();
      };
      const actions = h(
        'span',
        { class: 'row-actions' },
        k.spec?.disabled
          ? confirmButton('Enable', `Enable ${name}?`, setDisabled(false), fail)
          : confirmButton('Disable', `Disable ${name}?`, setDisabled(true), fail),
        // A key already being deleted is not deleted again.
        isBeingDeleted(k.metadata) ? null : ' ',
        isBeingDeleted(k.metadata) ? null : confirmButton('Delete', `Delete ${name}?`, remove, fail),
      );
      return [
        dash(k.spec?.displayName),
        nameCell(h('a', { href: link('keys', name) }, name), k.metadata),
        ownerOf(k.spec),
        dash(k.spec?.type),
        scopeSummary(k.spec?.scope),
        when(k.status?.lastActivity),
        expiry(k),
        k.spec?.disabled ? 'disabled' : 'active',
        actions,
      ];
    });
    const headers = [
      'Display name',
      'Name',
      'Owner',
      'Type',
      'Scope',
      'Last activity',
      'Expires',
      'State',
      'Actions',
    ];
    return [
      rowsAlert.el,
      rows.length ? h('div', { class: 'table-wrap' }, tableOf(headers, rows)) : h('p', {}, 'No access keys.'),
    ];
  };
  const form = createForm(ctx, (created) => {
    replace(notice, newKeyNotice(created));
    reload().catch(fail);
  });
  replace(main, body, notice, form);
  reload = await livePage<AccessKey>(ctx, body, 'Access Keys', '/ownedaccesskeys', render);
};

/** One key's page: what the list shows, live, with its display name and description editable. */
export const accessKeyView: View = async (ctx, main, [name = '']) => {
  const path = `/ownedaccesskeys/${encodeURIComponent(name)}`;
  await liveDetail<AccessKey>(ctx, main, {
    title: `Access key ${name}`,
    back: [h('a', { href: link('keys') }, 'All access keys')],
    collectionPath: '/ownedaccesskeys',
    name,
    render: (shown) => {
      const key = shown.object;
      const { alert, save, fail } = shownEditor(ctx, path, shown);
      const state = (disabled: boolean) => save([specField('disabled', 'State', disabled, false)]);
      const remove = async () => {
        await ctx.api.delete(path);
        ctx.go(link('keys'));
      };
      return [
        facts([
          ['Display name', dash(key.spec?.displayName)],
          ['Description', dash(key.spec?.description)],
          ['Owner', ownerOf(key.spec)],
          ['Type', dash(key.spec?.type)],
          ['Scope', scopeSummary(key.spec?.scope)],
          ['Last activity', when(key.status?.lastActivity)],
          ['Expires', expiry(key)],
          ['State', key.spec?.disabled ? 'disabled' : 'active'],
        ]),
        textForm(
          'Edit access key',
          [
            { id: 'key-edit-display-name', label: 'Display name', value: key.spec?.displayName ?? '' },
            { id: 'key-edit-description', label: 'Description', value: key.spec?.description ?? '' },
          ],
          'Save',
          // Guarded field by field: the server's status.lastActivity writes do not conflict.
          (v) =>
            save([
              specField('displayName', 'Display name', v['key-edit-display-name'] || null),
              specField('description', 'Description', v['key-edit-description'] || null),
            ])(),
        ),
        h(
          'div',
          { class: 'actions' },
          key.spec?.disabled
            ? confirmButton('Enable', `Enable ${name}?`, state(false), fail)
            : confirmButton('Disable', `Disable ${name}?`, state(true), fail),
          ' ',
          confirmButton('Delete', `Delete ${name}?`, remove, fail),
        ),
        alert.el,
      ];
    },
  });
};
