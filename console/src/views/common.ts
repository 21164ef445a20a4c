// Pieces the list and detail views share.

import { ApiError, messageOf, type List, type ObjectMeta } from '../api.js';
import type { Context } from '../context.js';
import { follow, type FollowState } from '../follow.js';
import { alertBox, button, field, h, replace, type Attrs, type Child } from '../dom.js';
import { asInputValue } from './form-edits.js';
import {
  changedFields,
  describeValue,
  guardedPatch,
  refusalOf,
  valueAt,
  type FieldChange,
} from '../field-patch.js';

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
  attrs: Attrs = {},
): HTMLElement {
  // Every confirmed action changes something: turned off on an object being deleted.
  const wrap = h('span', { class: 'confirm', [EDIT]: true });
  const start = button(
    label,
    () => {
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
    },
    attrs,
  );
  wrap.append(start);
  return wrap;
}

// The comma-separated lists the forms take (in form-edits.ts, which touches no DOM).
export { splitList } from './form-edits.js';

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
    // An input's value has no line breaks even when its default (the stored text) has.
    const initial = el.tagName === 'TEXTAREA' ? el.defaultValue : asInputValue(el.defaultValue);
    if (el.value !== initial) return true;
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

/** What a detail page's renderer can do with the object it shows. */
export interface Shown<T> {
  /** The object as shown: edits start from it and are tested against it. */
  readonly object: T;
  /** The server's answer to a save: shown at once as the new version. */
  saved(object: T): void;
}

/** A field of `spec` as a form edits it (`guard: false` for a switch such as "Disable"). */
export function specField(name: string, label: string, value: unknown, guard = true): FieldChange {
  return { path: ['spec', name], value, label, guard };
}

/** How many times a save is made again after a change beside an edited field that was not set. */
const SAVE_ATTEMPTS = 4;

/**
 * A detail page's edits: `save(edits)` makes an action that sends the changed fields
 * as a guarded JSON Patch (field-patch.ts: a test of each one's shown value, then the
 * change), so a write to anything else (a key's status.lastActivity) does not make it
 * fail and a concurrent change of an edited field does; it shows the server's answer.
 * A refused save (422 for a failed `test`, as upstream answers; 409; 404) is explained
 * from the object as the server holds it now: which edited field changed and to what,
 * or, when only something beside a field that was not set moved, the save is made
 * again from that object. `fail` shows a failed action's message in `alert`.
 */
export function shownEditor<T extends Versioned>(
  ctx: Context,
  path: string,
  shown: Shown<T>,
): {
  alert: ReturnType<typeof alertBox>;
  save: (edits: readonly FieldChange[]) => () => Promise<void>;
  fail: (err: unknown) => void;
} {
  const alert = alertBox();
  const conflict = (message: string) => new ApiError(409, { reason: 'Conflict', code: 409, message });
  return {
    alert,
    save: (edits) => async () => {
      const original = shown.object;
      // What the user changed from the page: a field left as shown is never sent, even when a
      // save made again from a newer version would see it differ.
      const mine = changedFields(original, edits);
      let base: unknown = original;
      for (let attempt = 1; ; attempt++) {
        const operations = guardedPatch(base, mine);
        if (operations.length === 0) return;
        let refused: unknown;
        try {
          shown.saved(await ctx.api.jsonPatch<T>(path, operations));
          return;
        } catch (err) {
          if (!(err instanceof ApiError) || ![404, 409, 422].includes(err.code)) throw err;
          refused = err;
        }
        let current: unknown;
        try {
          current = await ctx.api.get<unknown>(path);
        } catch (readErr) {
          if (readErr instanceof ApiError && readErr.code === 404)
            throw conflict('Not saved: it was deleted meanwhile.');
          throw refused;
        }
        const refusal = refusalOf(original, current, mine, base);
        if (refusal.kind === 'none') throw refused;
        if (refusal.kind === 'replaced')
          throw conflict(
            'Not saved: it was deleted and created again since this page showed it. Reload to see it.',
          );
        if (refusal.kind === 'changed') {
          const now = refusal.fields.map((f) =>
            f.secret
              ? `${f.label} was changed`
              : `${f.label} is now ${describeValue(valueAt(current, f.path))}`,
          );
          throw conflict(
            `Not saved: changed on the server since this page showed it: ${now.join('; ')}. Your edit is kept; reload to start from the current values.`,
          );
        }
        if (attempt >= SAVE_ATTEMPTS)
          throw conflict('Not saved: it keeps changing on the server. Try again.');
        base = current;
      }
    },
    fail: (err) => alert.show(messageOf(err)),
  };
}

/** kubectl's "Terminating": a delete was asked for and finalizers still hold the object. */
export function isBeingDeleted(meta: ObjectMeta): boolean {
  return !!meta.deletionTimestamp;
}

/** The mark a list shows beside the name of an object being deleted. */
export function deletionMark(meta: ObjectMeta): Child {
  if (!isBeingDeleted(meta)) return null;
  const holders = meta.finalizers?.length ? `; waiting for ${meta.finalizers.join(', ')}` : '';
  return h(
    'span',
    { class: 'badge deleting', title: `Deleting since ${when(meta.deletionTimestamp)}${holders}` },
    'Deleting',
  );
}

/** A list's name cell: the link to the object's page, and the deletion mark. */
export function nameCell(link: HTMLElement, meta: ObjectMeta): Child {
  const mark = deletionMark(meta);
  return mark ? h('span', {}, link, ' ', mark) : link;
}

/** Marks an action that changes the object: turned off while the object is being deleted. */
const EDIT = 'data-edit';

/**
 * What the server still accepts while finalizers hold the object is any update that
 * adds no finalizer (k8s.io/apiserver ValidateObjectMetaUpdate; our Store likewise),
 * but a change to an object on its way out is lost with it, and a second delete does
 * nothing: the page offers only the removal of a finalizer.
 */
function disableEdits(root: HTMLElement): void {
  for (const el of root.querySelectorAll<
    HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement
  >(`form input, form textarea, form select, form button, [${EDIT}] button, button[${EDIT}]`))
    el.disabled = true;
}

/** The notice of an object being deleted: since when, and each finalizer with a way to remove it. */
function deletionNotice(
  noun: string,
  meta: ObjectMeta,
  remove: (index: number) => Promise<void>,
  onError: (err: unknown) => void,
): Child[] {
  const finalizers = meta.finalizers ?? [];
  return [
    h(
      'p',
      {},
      `${noun} is being deleted (since ${when(meta.deletionTimestamp)}). `,
      finalizers.length
        ? 'It stays until these finalizers are removed; it can no longer be edited.'
        : 'It can no longer be edited.',
    ),
    finalizers.length
      ? h(
          'ul',
          { class: 'plain', 'aria-label': 'Finalizers' },
          ...finalizers.map((name, i) =>
            h(
              'li',
              {},
              h('code', {}, name),
              ' ',
              confirmButton('Remove finalizer', `Remove finalizer ${name}?`, () => remove(i), onError, {
                'aria-label': `Remove finalizer ${name}`,
              }),
            ),
          ),
        )
      : null,
  ];
}

/**
 * Removes one finalizer as `kubectl patch --type json` would: a test that it is still
 * the one at that place (and that the object is the one shown), then its removal;
 * the last one gone, the server deletes the object.
 */
function removeFinalizer<T extends Versioned>(
  ctx: Context,
  path: string,
  object: T,
  index: number,
): Promise<unknown> {
  const at = `/metadata/finalizers/${index}`;
  return ctx.api.jsonPatch<unknown>(path, [
    { op: 'test', path: '/metadata/uid', value: object.metadata.uid },
    { op: 'test', path: at, value: object.metadata.finalizers?.[index] },
    { op: 'remove', path: at },
  ]);
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
  // Says that the object is being deleted, from the newest version seen (even while an edit is kept).
  const deleting = h('div', { role: 'status', class: 'card notice deleting', hidden: true });
  let current: T | undefined;
  let newest: T | undefined;

  /** While a delete waits for finalizers: the notice, and the page's edits turned off. */
  const showDeletion = (): void => {
    const object = newest;
    if (object && isBeingDeleted(object.metadata)) disableEdits(body);
    // A "Remove finalizer?" question open in the notice is the user's: the next version shown redraws it.
    if (deleting.querySelector(`[${CONFIRMING}]`)) return;
    if (!object || !isBeingDeleted(object.metadata)) {
      deleting.hidden = true;
      replace(deleting);
      return;
    }
    replace(
      deleting,
      ...deletionNotice(
        noun,
        object.metadata,
        (index) => removeFinalizer(ctx, objectPath, object, index).then((answer) => arrived(answer as T)),
        (err) => alert.show(messageOf(err)),
      ),
    );
    deleting.hidden = false;
  };
  const show = (object: T): void => {
    current = object;
    newest = object;
    changed.hidden = true;
    replace(changed);
    replace(body, ...options.render({ object, saved: show }));
    showDeletion();
  };
  const arrived = (object: T): void => {
    if (done.signal.aborted) return;
    const rv = object.metadata.resourceVersion;
    if (current && rv && rv === current.metadata.resourceVersion) return;
    if (!current || !editInProgress(body)) {
      show(object);
      return;
    }
    newest = object;
    showDeletion();
    // The user's edit is theirs: say that the object moved on, and let them choose.
    replace(
      changed,
      h(
        'p',
        {},
        `${noun} was changed since this page showed it. Your edit is kept; saving it is refused if a field you changed was changed there too.`,
      ),
      button('Reload', () => show(object)),
    );
    changed.hidden = false;
  };
  const deleted = (): void => {
    done.abort();
    current = undefined;
    newest = undefined;
    live.show(undefined);
    changed.hidden = true;
    deleting.hidden = true;
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
  main.insertBefore(deleting, body);
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
