/** Send a test message: normal, delayed (delaySeconds) or FIFO (shardKey), with an optional key. */
import type { SendBody, SendResult } from '../../lib/client/types.js';
import { api, enc } from './api.js';
import { field, h, input, say, statusLine, values } from './dom.js';

export function sendView(afterSend: () => void): HTMLElement {
  const line = statusLine();
  const form = h('form', { 'aria-label': 'Send a test message' },
    field('Topic', input('topic', { required: true })),
    field('Body', h('textarea', { name: 'body', rows: 3, required: true })),
    h('div', { class: 'row' },
      field('Key (optional)', input('key')),
      field('Delay seconds (optional)', input('delaySeconds', { type: 'number', min: 0 })),
      field('Shard key (FIFO topics)', input('shardKey'))),
    h('button', { type: 'submit' }, 'Send'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const v = values(form);
    // The body as typed: values() trims, which would change what is sent.
    const body: SendBody = { body: String(new FormData(form).get('body') ?? '') };
    if (v.key) body.keys = [v.key];
    if (v.delaySeconds) body.delaySeconds = Number(v.delaySeconds);
    if (v.shardKey) body.shardKey = v.shardKey;
    api<SendResult>('POST', `/v1/topics/${enc(v.topic ?? '')}/messages`, body).then(
      (result) => {
        say(line, `Sent ${result.messageId} (${result.state}${result.sequence !== undefined ? `, sequence ${result.sequence}` : ''}).`);
        afterSend();
      },
      (error: Error) => say(line, error.message, 'error'),
    );
  });
  return h('section', { 'aria-labelledby': 'send-h' }, h('h2', { id: 'send-h' }, 'Send a test message'), form, line);
}
