/** A few DOM helpers: elements from data (text only: nothing the server says becomes markup). */
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces what `parent` shows. */
export function show(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

let ids = 0;
/** A labelled form field: the label names the input (for screen readers and for tests). */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLElement {
  input.id ||= `f${++ids}`;
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
}

export const input = (name: string, attrs: Attrs = {}) => h('input', { name, autocomplete: 'off', ...attrs });

export function select(name: string, options: string[]): HTMLSelectElement {
  return h('select', { name }, ...options.map((o) => h('option', { value: o }, o)));
}

/** A table in a scroll box that keyboard users can scroll (tabindex) and screen readers can name. */
export function table(caption: string, head: string[], rows: Child[][]): HTMLElement {
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...(rows.length ? rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))
        : [h('tr', {}, h('td', { colspan: head.length }, 'None.'))])),
    ),
  );
}

/** A form's fields by name, trimmed. */
export function values(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new FormData(form)) out[name] = String(value).trim();
  return out;
}

/** A status line that screen readers announce. */
export function statusLine(): HTMLElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}

export function say(line: HTMLElement, text: string, kind: 'ok' | 'error' = 'ok'): void {
  line.textContent = text;
  line.className = `status ${kind}`;
}

/** Asks before a change that cannot be undone (a modal <dialog>: focus stays inside, Esc cancels). */
export function confirmDialog(question: string, action: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { 'aria-labelledby': 'confirm-q' },
      h('form', { method: 'dialog' },
        h('p', { id: 'confirm-q' }, question),
        h('div', { class: 'row' },
          h('button', { value: 'cancel', autofocus: true }, 'Cancel'),
          h('button', { value: 'ok', class: 'danger' }, action))),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
