// Pieces the list and detail views share.

import { ApiError, messageOf, type List } from '../api.js';
import type { Context } from '../context.js';
import { alertBox, button, field, h, replace, type Child } from '../dom.js';

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

/** Marks a question being asked: a live reload waits until it is answered, rather than wiping it. */
const CONFIRMING = 'data-confirming';

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
        group.removeAttribute(CONFIRMING);
        action().catch(onError);
      },
      { class: 'danger' },
    );
    const no = button('Cancel', () => replace(wrap, start));
    const group = h(
      'span',
      { role: 'group', 'aria-label': question, [CONFIRMING]: true },
      question,
      ' ',
      yes,
      ' ',
      no,
    );
    replace(wrap, group);
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

/** After a watch ends or fails, the next list and watch wait this long (the server may be restarting). */
const REWATCH_DELAY_MS = 2_000;
/** Events arriving together (a burst of writes) cause one reload. */
const COALESCE_MS = 150;

/**
 * A list page that updates live: it lists `path`, renders the items, then watches from
 * the list's resourceVersion and lists again after any change (the server's filtered
 * watch says when an object appears, changes or stops being visible). A watch that
 * ends, expires (410) or fails starts over from a new list. Stops when the view's
 * signal aborts. Returns a reload for changes the page makes itself.
 */
export async function livePage<T>(
  ctx: Context,
  main: HTMLElement,
  title: string,
  path: string,
  render: (items: T[]) => Child[],
): Promise<() => Promise<void>> {
  let resourceVersion = '';
  const load = async (): Promise<Child[]> => {
    const list = await ctx.api.get<List<T>>(path);
    resourceVersion = list.metadata?.resourceVersion ?? '';
    return render(list.items);
  };
  const live = h('span', { class: 'live', 'aria-live': 'polite' });
  await page(main, title, load, [live]);
  const body = main.querySelector('.page-body');
  const alert = main.querySelector<HTMLElement>('[role="alert"]');
  const reload = async () => {
    const children = await load();
    if (body && !ctx.signal.aborted) replace(body, ...children);
    if (alert) {
      alert.hidden = true;
      alert.textContent = '';
    }
  };
  void (async () => {
    while (!ctx.signal.aborted) {
      let pending: ReturnType<typeof setTimeout> | undefined;
      try {
        if (!resourceVersion) await reload();
        live.textContent = 'Live';
        await ctx.api.watch(
          path,
          resourceVersion,
          (type) => {
            if (type === 'BOOKMARK' || pending) return;
            const later = () => {
              // A confirmation open in the page is the user's: the change shows once it is answered.
              if (body?.querySelector(`[${CONFIRMING}]`)) {
                pending = setTimeout(later, COALESCE_MS);
                return;
              }
              pending = undefined;
              reload().catch(() => undefined);
            };
            pending = setTimeout(later, COALESCE_MS);
          },
          ctx.signal,
        );
      } catch (err) {
        if (ctx.signal.aborted) return;
        // 410 Gone: the version is too old; list again. Anything else is shown.
        if (!(err instanceof ApiError && err.code === 410) && alert) {
          alert.textContent = messageOf(err);
          alert.hidden = false;
        }
      }
      if (pending) clearTimeout(pending);
      live.textContent = '';
      resourceVersion = '';
      await new Promise((r) => setTimeout(r, REWATCH_DELAY_MS));
    }
  })();
  return reload;
}

/**
 * A form of text fields whose submit runs `submit` with the values by field id; the
 * server's field errors (or its message) are shown beside the form, in role "alert".
 */
export function textForm(
  title: string,
  fields: { id: string; label: string; required?: boolean; value?: string }[],
  submitLabel: string,
  submit: (values: Record<string, string>) => Promise<void>,
): HTMLFormElement {
  const inputs = fields.map((f) => ({
    f,
    input: h('input', { type: 'text', required: f.required, autocomplete: 'off', value: f.value }),
  }));
  const errors = h('div', { role: 'alert', class: 'alert', hidden: true });
  const send = h('button', { type: 'submit' }, submitLabel);
  const form = h(
    'form',
    { class: 'card', 'aria-label': title },
    h('h2', {}, title),
    ...inputs.map(({ f, input }) => field(f.label, f.id, input)),
    send,
    errors,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    errors.hidden = true;
    const values: Record<string, string> = {};
    for (const { f, input } of inputs) values[f.id] = input.value.trim();
    send.disabled = true;
    submit(values)
      .then(() => form.reset())
      .catch((err: unknown) => {
        replace(errors, ...validationMessages(err).map((l) => h('p', {}, l)));
        errors.hidden = false;
      })
      .finally(() => {
        send.disabled = false;
      });
  });
  return form;
}

/** A Status's field errors as lines ("spec.data[a b]: Invalid value: ..."), or its message. */
export function validationMessages(err: unknown): string[] {
  if (err instanceof ApiError) {
    const causes = err.status.details?.causes ?? [];
    if (causes.length)
      return causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '')));
  }
  return [messageOf(err)];
}
