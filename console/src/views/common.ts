// Pieces the list and detail views share.

import { messageOf } from '../api.js';
import { alertBox, button, h, replace, type Child } from '../dom.js';

/** A page: a heading, a refresh button, an alert for failures, and the body `load` builds. */
export async function page(
  main: HTMLElement,
  title: string,
  load: () => Promise<Child[]>,
  actions: Child[] = [],
): Promise<void> {
  const alert = alertBox();
  const body = h('div', { class: 'page-body' });
  const refresh = (): void => {
    alert.show(undefined);
    load()
      .then((children) => replace(body, ...children))
      .catch((err: unknown) => alert.show(messageOf(err)));
  };
  replace(
    main,
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, title),
      h('div', { class: 'actions' }, ...actions, button('Refresh', refresh)),
    ),
    alert.el,
    body,
  );
  try {
    replace(body, ...(await load()));
  } catch (err) {
    alert.show(messageOf(err));
  }
}

export function dash(value: string | undefined | null): string {
  return value ? value : '—';
}

export function when(timestamp: string | undefined | null): string {
  if (!timestamp) return '—';
  const d = new Date(timestamp);
  return Number.isNaN(d.getTime()) ? timestamp : d.toLocaleString();
}

/** A definition list of label/value pairs. */
export function facts(pairs: [string, Child][]): HTMLElement {
  const dl = h('dl', { class: 'facts' });
  for (const [label, value] of pairs) dl.append(h('dt', {}, label), h('dd', {}, value ?? '—'));
  return dl;
}

export function list(values: readonly string[] | undefined): Child {
  if (!values || values.length === 0) return '—';
  return h('ul', { class: 'plain' }, ...values.map((v) => h('li', {}, v)));
}

/** A "Delete" button that asks for confirmation in the page (no browser dialog). */
export function confirmButton(
  label: string,
  question: string,
  action: () => Promise<void>,
  onError: (err: unknown) => void,
): HTMLElement {
  const wrap = h('span', { class: 'confirm' });
  const start = button(label, () => {
    const yes = button(
      `Confirm ${label.toLowerCase()}`,
      () => {
        action().catch(onError);
      },
      { class: 'danger' },
    );
    const no = button('Cancel', () => replace(wrap, start));
    replace(wrap, h('span', { role: 'group', 'aria-label': question }, question, ' ', yes, ' ', no));
    yes.focus();
  });
  wrap.append(start);
  return wrap;
}

/** "a, b ,c" -> ['a', 'b', 'c']: the comma-separated lists the forms take. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
