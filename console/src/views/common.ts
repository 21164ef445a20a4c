// Pieces the list and detail views share.

import { ApiError, messageOf, type List, type ObjectMeta } from '../api.js';
import type { Context } from '../context.js';
import { follow, type FollowState } from '../follow.js';
import { alertBox, button, field, h, replace, type Child } from '../dom.js';

/** A page's frame: a heading with actions, an alert for failures, and the body. */
export function shell(
  main: HTMLElement,
  title: string,
  actions: Child[],
): { body: HTMLElement; alert: ReturnType<typeof alertBox> } {
  const alert = alertBox();
  const body = h('div', { class: 'page-body' });
  replace(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, title), h('div', { class: 'actions' }, ...actions)),
    alert.el,
    body,
  );
  return { body, alert };
}

/** "Live" while a page's watch runs, "Reconnecting…" while it waits to try again. */
function liveIndicator(): { el: HTMLElement; show(state: FollowState | undefined): void } {
  const el = h('span', { class: 'live', 'aria-live': 'polite' });
  return {
    el,
    show(state) {
      el.textContent = state?.phase === 'live' ? 'Live' : state?.phase === 'retrying' ? 'Reconnecting…' : '';
    },
  };
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

/** Events arriving together (a burst of writes) cause one reload. */
const COALESCE_MS = 150;

/** A failure worth showing: the server's answer. A dropped connection shows as "Reconnecting…" only. */
function serverMessage(error: unknown): string | undefined {
  return error instanceof ApiError && error.code !== 0 ? messageOf(error) : undefined;
}

/**
 * A list page that updates live: it lists `path`, renders the items, then follows the
 * collection (follow.ts: watch from the list's resourceVersion, resume, relist on
 * 410, back off after failures) and lists again after any change (the server's
 * filtered watch says when an object appears, changes or stops being visible).
 * Stops when the view's signal aborts. Returns a reload for changes the page makes itself.
 */
export async function livePage<T>(
  ctx: Context,
  main: HTMLElement,
  title: string,
  path: string,
  render: (items: T[]) => Child[],
): Promise<() => Promise<void>> {
  const live = liveIndicator();
  let pending: ReturnType<typeof setTimeout> | undefined;
  ctx.signal.addEventListener('abort', () => clearTimeout(pending));
  const later = (): void => {
    // A confirmation open in the page is the user's: the change shows once it is answered.
    if (body.querySelector(`[${CONFIRMING}]`)) {
      pending = setTimeout(later, COALESCE_MS);
      return;
    }
    pending = undefined;
    reload().catch(() => undefined);
  };
  const reload = async (): Promise<string> => {
    const list = await ctx.api.get<List<T>>(path);
    if (ctx.signal.aborted) return '';
    // A question asked while the list was on its way stays: the list is read again once it is answered.
    if (body.querySelector(`[${CONFIRMING}]`)) pending ??= setTimeout(later, COALESCE_MS);
    else {
      replace(body, ...render(list.items));
      alert.show(undefined);
    }
    return list.metadata?.resourceVersion ?? '';
  };
  const refresh = () => void reload().catch((err: unknown) => alert.show(messageOf(err)));
  const { body, alert } = shell(main, title, [live.el, button('Refresh', refresh)]);
  let from: string;
  try {
    from = await reload();
  } catch (err) {
    alert.show(messageOf(err));
    from = '';
  }
  void follow(
    {
      read: reload,
      watch: (rv, onEvent, signal) => ctx.api.watch(path, rv, onEvent, signal),
      onEvent: () => {
        pending ??= setTimeout(later, COALESCE_MS);
      },
      onState: (state) => {
        live.show(state);
        if (state.phase !== 'live') alert.show(serverMessage(state.error));
      },
    },
    ctx.signal,
    { from },
  );
  return async () => {
    await reload();
  };
}

/** True while the user is changing something in `root`: a field changed, or a question asked. */
export function editInProgress(root: HTMLElement): boolean {
  if (root.querySelector(`[${CONFIRMING}]`)) return true;
  for (const el of root.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input, textarea')) {
    if (el.value !== el.defaultValue) return true;
  }
  for (const select of root.querySelectorAll('select')) {
    for (const option of select.options) if (option.selected !== option.defaultSelected) return true;
  }
  return false;
}

/** What a detail page needs of its object. */
interface Versioned {
  readonly metadata: ObjectMeta;
}

/**
 * The `metadata` of a merge patch that only applies to the version shown: the server
 * refuses it with 409 Conflict when the object changed meanwhile (as upstream does
 * for a patch carrying a resourceVersion).
 */
export function precondition(object: Versioned): { resourceVersion?: string } {
  return { resourceVersion: object.metadata.resourceVersion };
}

/** What a detail page's renderer can do with the object it shows. */
export interface Shown<T> {
  /** The object as shown: edits start from it and carry its resourceVersion. */
  readonly object: T;
  /** The server's answer to a save: shown at once as the new version. */
  saved(object: T): void;
}

/**
 * A detail page's edits: `patch(spec)` makes an action that merge-patches the object
 * with the shown resourceVersion (so a concurrent change answers 409) and shows the
 * server's answer; `fail` shows a failed action's message in `alert`.
 */
export function shownEditor<T extends Versioned>(
  ctx: Context,
  path: string,
  shown: Shown<T>,
): {
  alert: ReturnType<typeof alertBox>;
  patch: (spec: Record<string, unknown>) => () => Promise<void>;
  fail: (err: unknown) => void;
} {
  const alert = alertBox();
  return {
    alert,
    patch: (spec) => async () => {
      shown.saved(await ctx.api.mergePatch<T>(path, { metadata: precondition(shown.object), spec }));
    },
    fail: (err) => alert.show(messageOf(err)),
  };
}

/**
 * A detail page that follows its one object: a get, then a watch of the collection
 * with `fieldSelector=metadata.name=<name>` from the get's resourceVersion (as
 * `kubectl get <name> -w`), through follow.ts. A change is shown as it arrives, unless
 * the user is editing: then the page says that the object changed and offers to
 * reload, and keeps the edit (a save of it carries the old resourceVersion, so the
 * server answers 409 Conflict, whose message is shown). A deletion replaces the page's
 * content with a notice, so nothing stale stays on screen.
 */
export async function liveDetail<T extends Versioned>(
  ctx: Context,
  main: HTMLElement,
  options: {
    /** The heading, and what the notices call the object: "Team platform". */
    title: string;
    back: Child[];
    /** The object's collection (where the watch is) and its name in it. */
    collectionPath: string;
    name: string;
    render: (shown: Shown<T>) => Child[];
  },
): Promise<void> {
  const noun = options.title;
  const objectPath = `${options.collectionPath}/${encodeURIComponent(options.name)}`;
  const live = liveIndicator();
  // The page's own end: leaving it, or the object's deletion, ends the watch.
  const done = new AbortController();
  ctx.signal.addEventListener('abort', () => done.abort());
  const changed = h('div', { role: 'status', class: 'card notice', hidden: true });
  let current: T | undefined;

  const show = (object: T): void => {
    current = object;
    changed.hidden = true;
    replace(changed);
    replace(body, ...options.render({ object, saved: show }));
  };
  const arrived = (object: T): void => {
    if (done.signal.aborted) return;
    const rv = object.metadata.resourceVersion;
    if (current && rv && rv === current.metadata.resourceVersion) return;
    if (!current || !editInProgress(body)) {
      show(object);
      return;
    }
    // The user's edit is theirs: say that the object moved on, and let them choose.
    replace(
      changed,
      h(
        'p',
        {},
        `${noun} was changed since this page showed it. Your edit is kept; saving it will be refused.`,
      ),
      button('Reload', () => show(object)),
    );
    changed.hidden = false;
  };
  const deleted = (): void => {
    done.abort();
    current = undefined;
    live.show(undefined);
    changed.hidden = true;
    replace(body, h('p', { role: 'alert', class: 'alert' }, `${noun} was deleted.`));
  };
  const read = async (): Promise<string> => {
    const object = await ctx.api.get<T>(objectPath);
    arrived(object);
    alert.show(undefined);
    return object.metadata.resourceVersion ?? '';
  };
  const refresh = () => {
    ctx.api
      .get<T>(objectPath)
      .then((object) => {
        if (!done.signal.aborted) show(object);
      })
      .catch((err: unknown) => alert.show(messageOf(err)));
  };
  const { body, alert } = shell(main, options.title, [live.el, ...options.back, button('Refresh', refresh)]);
  main.insertBefore(changed, body);
  let from: string;
  try {
    from = await read();
  } catch (err) {
    alert.show(messageOf(err));
    return;
  }
  const selector = `fieldSelector=${encodeURIComponent(`metadata.name=${options.name}`)}`;
  void follow(
    {
      read,
      watch: (rv, onEvent, signal) => ctx.api.watch(options.collectionPath, rv, onEvent, signal, selector),
      onEvent: (event) => {
        if (event.type === 'DELETED') deleted();
        else arrived(event.object as T);
      },
      onState: (state) => {
        if (done.signal.aborted) return;
        // Read again and not found: deleted while the watch was down.
        if (state.phase === 'stopped' && state.error instanceof ApiError && state.error.code === 404) {
          deleted();
          return;
        }
        live.show(state);
        if (state.phase === 'stopped') alert.show(`Live updates stopped: ${messageOf(state.error)}`);
        else if (state.phase === 'retrying') alert.show(serverMessage(state.error));
      },
    },
    done.signal,
    { from },
  );
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
