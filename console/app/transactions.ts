/** A transaction by id: its state and check history, commit and rollback. */
import type { Transaction } from '../../lib/client/types.js';
import { api, enc } from './api.js';
import { confirmDialog, field, h, input, say, show, statusLine, table, values } from './dom.js';

export function transactionsView(): HTMLElement {
  const line = statusLine();
  const result = h('div');
  const form = h('form', { class: 'inline', 'aria-label': 'Look a transaction up' },
    field('Transaction id', input('id', { required: true, pattern: 't[0-9A-Z]{26}' })),
    h('button', { type: 'submit' }, 'Show transaction'));

  async function load(id: string) {
    try {
      const t = await api<Transaction>('GET', `/v1/transactions/${enc(id)}`);
      const resolve = (action: 'commit' | 'rollback') => async () => {
        if (!(await confirmDialog(`${action === 'commit' ? 'Commit' : 'Roll back'} transaction ${t.transactionId}?`, action))) return;
        try {
          await api('POST', `/v1/transactions/${enc(t.transactionId)}/${action}`);
          await load(t.transactionId);
        } catch (error) {
          say(line, (error as Error).message, 'error');
        }
      };
      show(result,
        h('dl', { class: 'facts' },
          ...([['State', t.state], ['Producer group', t.producerGroup ?? '–'], ['Topic', t.topic], ['Message', t.messageId],
            ['Sent', t.sentAt], ['Next check', t.nextCheckAt ?? '–'], ['Checks', t.checkCount], ['Resolved by', t.resolvedBy ?? '–'],
            ['Resolved at', t.resolvedAt ?? '–']] as Array<[string, string | number]>).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
        t.state === 'prepared' ? h('div', { class: 'row' },
          h('button', { type: 'button', onclick: resolve('commit') }, 'Commit'),
          h('button', { type: 'button', class: 'danger', onclick: resolve('rollback') }, 'Roll back')) : null,
        table('Check-backs', ['#', 'At', 'Answer', 'HTTP', 'Error', 'Latency'],
          t.checks.map((c) => [c.checkCount, c.at, c.status, c.httpStatus ?? '–', c.error ?? '–', `${c.latencyMs} ms`])));
      say(line, `Transaction ${t.transactionId}: ${t.state}.`);
    } catch (error) {
      show(result);
      say(line, (error as Error).message, 'error');
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(values(form).id ?? '');
  });
  return h('section', { 'aria-labelledby': 'tx-h' }, h('h2', { id: 'tx-h' }, 'Transactions'), form, line, result);
}
