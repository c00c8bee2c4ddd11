/** Message lookup by id or by key, with the per-group delivery state and links to dead-letter copies. */
import type { Message, MessageDetail, MessageList } from '../../lib/client/types.js';
import { api, enc } from './api.js';
import { field, h, input, say, select, show, statusLine, table, values } from './dom.js';

export interface Lookup {
  element: HTMLElement;
  /** Shows one message (from a link elsewhere in the console). */
  byId(topic: string, messageId: string): Promise<void>;
  byKey(topic: string, key: string): Promise<void>;
}

export function lookupView(): Lookup {
  const line = statusLine();
  const result = h('div', { id: 'lookup-result', tabindex: -1 });
  const form = h('form', { class: 'inline', 'aria-label': 'Look a message up' },
    field('Topic', input('topic', { required: true })),
    field('Find by', select('by', ['message id', 'key'])),
    field('Message id or key', input('value', { required: true })),
    h('button', { type: 'submit' }, 'Look up'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const v = values(form);
    void (v.by === 'key' ? byKey(v.topic ?? '', v.value ?? '') : byId(v.topic ?? '', v.value ?? ''));
  });

  function summary(m: Message): HTMLElement {
    return h('dl', { class: 'facts' },
      ...([
        ['Message id', m.messageId], ['Topic', m.topic], ['State', m.state], ['Keys', m.keys.join(', ') || '–'],
        ['Tag', m.tag ?? '–'], ['Shard key', m.shardKey ?? '–'], ['Sequence', m.sequence ?? '–'],
        ['Sent', m.sentAt], ['Deliverable', m.deliverableAt], ['Expires', m.expiresAt],
      ] as Array<[string, string | number]>).flatMap(([k, val]) => [h('dt', {}, k), h('dd', {}, val)]),
      h('dt', {}, 'Body'), h('dd', {}, h('pre', {}, m.encoding === 'base64' ? `(base64) ${m.body}` : m.body)),
      ...Object.entries(m.properties).flatMap(([k, val]) => [h('dt', {}, k), h('dd', {}, val)]));
  }

  async function byId(topic: string, messageId: string): Promise<void> {
    try {
      const m = await api<MessageDetail>('GET', `/v1/topics/${enc(topic)}/messages/${enc(messageId)}`);
      show(result, h('h3', {}, `Message ${m.messageId}`), summary(m),
        table('Delivery per group', ['Group', 'State', 'Deliveries', 'Committed', 'Dead-letter copy'], m.groups.map((g) => [
          g.group, h('span', { 'data-state': g.group }, g.state), g.deliveryCount ?? '–', g.committedAt ?? '–',
          g.deadLetter ? h('button', { type: 'button', class: 'link', onclick: () => void byId(g.deadLetter!.topic, g.deadLetter!.messageId) },
            `${g.deadLetter.topic} / ${g.deadLetter.messageId}`) : '–',
        ])));
      say(line, `Found ${m.messageId}.`);
      result.focus();
    } catch (error) {
      show(result);
      say(line, (error as Error).message, 'error');
    }
  }

  async function byKey(topic: string, key: string): Promise<void> {
    try {
      const list = await api<MessageList>('GET', `/v1/topics/${enc(topic)}/messages?key=${enc(key)}&limit=20`);
      show(result, table(`Messages with key ${key} (newest first)`, ['Message', 'State', 'Sent', 'Body'], list.messages.map((m) => [
        h('button', { type: 'button', class: 'link', onclick: () => void byId(m.topic, m.messageId) }, m.messageId),
        m.state, m.sentAt, m.body.slice(0, 80),
      ])));
      say(line, `${list.messages.length} message(s)${list.nextToken ? ' (more exist)' : ''}.`);
    } catch (error) {
      show(result);
      say(line, (error as Error).message, 'error');
    }
  }

  const element = h('section', { 'aria-labelledby': 'lookup-h' }, h('h2', { id: 'lookup-h' }, 'Find a message'), form, line, result);
  return { element, byId, byKey };
}
