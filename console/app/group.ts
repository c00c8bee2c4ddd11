/**
 * One group: its figures, its dead letters (the copies in its dead-letter topic, found by
 * key: v1 has no listing of a topic) with redrive, seek and purge behind a confirmation,
 * and, for push groups, their last attempts when the server reports them.
 */
import type { GroupDetail, MessageList } from '../../lib/client/types.js';
import { api, enc } from './api.js';
import { confirmDialog, field, h, input, say, select, show, statusLine, table, values } from './dom.js';
import type { Lookup } from './lookup.js';
import { age } from './overview.js';

/** The server's answer for a push group carries these when push delivery is deployed. */
type PushFacts = { push?: (Record<string, unknown> & { lastAttempts?: Array<Record<string, unknown>> }) | null };

export function groupView(lookup: Lookup, changed: () => void): { element: HTMLElement; open: (group: string) => Promise<void> } {
  const line = statusLine();
  const body = h('div', {}, h('p', { class: 'muted' }, 'Open a group from the table above.'));
  const heading = h('h2', { id: 'group-h', tabindex: -1 }, 'Group');
  let current: GroupDetail | undefined;

  async function act(question: string | undefined, action: string, call: () => Promise<unknown>, done: (answer: unknown) => string) {
    if (question && !(await confirmDialog(question, action))) return say(line, `${action}: cancelled.`);
    try {
      say(line, done(await call()));
      changed();
      if (current) await open(current.name, false);
    } catch (error) {
      say(line, `${action} failed: ${(error as Error).message}`, 'error');
    }
  }

  async function open(name: string, focus = true): Promise<void> {
    try {
      const g = await api<GroupDetail & PushFacts>('GET', `/v1/groups/${enc(name)}`);
      current = g;
      heading.textContent = `Group ${g.name}`;
      const dlqForm = h('form', { class: 'inline', 'aria-label': 'Find dead letters by key' },
        field(`Key in ${g.deadLetterTopic}`, input('key', { required: true })),
        h('button', { type: 'submit' }, 'Find dead letters'));
      const dlqResult = h('div');
      dlqForm.addEventListener('submit', (event) => {
        event.preventDefault();
        const key = values(dlqForm).key ?? '';
        // A dead-letter topic may be shared: read pages until 20 copies of this group (or 10 pages).
        const copies = async () => {
          const found: MessageList['messages'] = [];
          let next: string | null = null;
          for (let pages = 0; pages < 10 && found.length < 20; pages++) {
            const page: MessageList = await api<MessageList>('GET', `/v1/topics/${enc(g.deadLetterTopic)}/messages?key=${enc(key)}&limit=100${next ? `&nextToken=${enc(next)}` : ''}`);
            found.push(...page.messages.filter((m) => (m.properties['sluice-dead-letter-group'] ?? g.name) === g.name));
            next = page.nextToken;
            if (!next) break;
          }
          if (next) say(line, `More dead letters with key ${key} exist than shown.`);
          return found;
        };
        copies().then(
          (messages) => show(dlqResult, table(`Dead letters of ${g.name} with key ${key}`, ['Copy', 'Original', 'Reason', 'Deliveries'],
            messages.map((m) => [
              h('button', { type: 'button', class: 'link', onclick: () => void lookup.byId(m.topic, m.messageId) }, m.messageId),
              m.properties['sluice-dead-letter-source-message-id'] ?? '–',
              m.properties['sluice-dead-letter-reason'] ?? '–',
              m.properties['sluice-dead-letter-delivery-count'] ?? '–',
            ]))),
          (error: Error) => say(line, error.message, 'error'),
        );
      });
      const seekForm = h('form', { class: 'inline', 'aria-label': 'Seek' },
        field('Seek to', select('to', ['earliest', 'latest', 'time'])),
        field('Time (RFC 3339, for "time")', input('time', { placeholder: '2026-12-01T00:00:00Z' })),
        h('button', { type: 'submit' }, 'Seek'));
      seekForm.addEventListener('submit', (event) => {
        event.preventDefault();
        const v = values(seekForm);
        const to = v.to === 'time' ? v.time ?? '' : v.to ?? 'earliest';
        void act(`Move ${g.name}'s position on all its topics to ${to}? Leases in flight end.`, 'Seek',
          () => api('POST', `/v1/groups/${enc(g.name)}/seek`, { to }), () => `${g.name} moved to ${to}.`);
      });
      const { lastAttempts, ...pushSettings } = g.push ?? {};
      const push = g.push
        ? [h('h3', {}, 'Push delivery'), h('pre', {}, JSON.stringify(pushSettings, null, 2)),
          lastAttempts ? table('Last push attempts', ['At', 'Status', 'Latency (ms)', 'Error', 'Messages', 'Retried'],
            lastAttempts.map((a) => [a.at, a.status ?? 'no answer', a.latencyMs, a.error ?? '–', a.messages, a.retried].map((v) => String(v)))) : null]
        : [];
      show(body,
        h('dl', { class: 'facts' },
          ...([['Topics', g.subscriptions.map((s) => s.topic).join(', ')], ['Mode', g.deliveryMode], ['Backlog', g.backlog],
            ['In flight', g.inFlight], ['Pending', g.pending], ['Oldest message', age(g.oldestMessageAgeSeconds)],
            ['Committed', g.committed ?? 'not counted (many shard cursors)'], ['Dead letters', g.deadLettered], ['Dead-letter topic', g.deadLetterTopic],
            ['Visibility timeout', `${g.visibilityTimeoutSeconds} s`], ['Max deliveries', g.maxDeliveries],
            ['Retry back-off', `${g.retryPolicy.initialSeconds} s × ${g.retryPolicy.multiplier}, at most ${g.retryPolicy.maxSeconds} s`]] as Array<[string, string | number]>)
            .flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
        ...push,
        h('h3', {}, 'Dead letters'),
        h('div', { class: 'row' },
          h('button', { type: 'button', id: 'redrive', onclick: () => void act(`Redrive ${g.name}'s dead letters back to ${g.name}?`, 'Redrive',
            () => api('POST', `/v1/groups/${enc(g.name)}/redrive`, {}), (a) => {
              const r = a as { redriven?: number; more?: boolean };
              return `Redriven: ${r.redriven ?? 0}.${r.more ? ' More dead letters remain: redrive again.' : ''}`;
            }) }, 'Redrive dead letters')),
        dlqForm, dlqResult,
        h('h3', {}, 'Position'), seekForm,
        h('div', { class: 'row' }, ...g.subscriptions.map((s) => h('button', { type: 'button', class: 'danger', onclick: () => void act(
          `Purge topic ${s.topic}? Every deliverable and scheduled message is dropped for every group.`, 'Purge',
          () => api('POST', `/v1/topics/${enc(s.topic)}/purge`, {}), () => `${s.topic} purged.`) }, `Purge ${s.topic}`))));
      if (focus) heading.focus();
    } catch (error) {
      say(line, (error as Error).message, 'error');
    }
  }

  return { element: h('section', { 'aria-labelledby': 'group-h' }, heading, line, body), open };
}
