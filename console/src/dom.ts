// Builds DOM with textContent and setAttribute only: every value a server or a user
// supplies lands as text, never as markup, so it is escaped by construction.

export type Child = Node | string | number | null | undefined | false;

/** Attributes set with setAttribute; `true` sets an empty attribute, false/undefined skips it. */
export type Attrs = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    // Event handler attributes would be code: refused, listeners are added with on().
    if (name.toLowerCase().startsWith('on')) throw new Error(`attribute ${name} is not allowed`);
    el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

export function on<K extends keyof HTMLElementEventMap>(
  el: HTMLElement,
  type: K,
  listener: (ev: HTMLElementEventMap[K]) => void,
): HTMLElement {
  el.addEventListener(type, listener);
  return el;
}

/** A button that runs `action` when pressed (a `type="button"` unless given). */
export function button(label: string, action: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', action);
  return b;
}

/** A labelled input: the label's `for` names the input, so screen readers and tests find it by its label. */
export function field(
  label: string,
  id: string,
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
): HTMLElement {
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input);
}

/** An element with role "alert" that shows a failed request's message (empty: hidden). */
export function alertBox(): { el: HTMLElement; show(message: string | undefined): void } {
  const el = h('p', { role: 'alert', class: 'alert', hidden: true });
  return {
    el,
    show(message) {
      el.textContent = message ?? '';
      el.hidden = !message;
    },
  };
}

/** A table with a header row and one row per item. */
export function table(headers: string[], rows: Child[][], caption?: string): HTMLTableElement {
  return h(
    'table',
    {},
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((c) => h('td', {}, c))))),
  );
}
