import { describe, expect, it } from 'vitest';
import { SluiceClient, SluiceConnectionError } from '../../lib/client/index.js';

/**
 * An answer whose body is lost (headers arrived, then a reset or the time-out while reading) is a
 * lost connection: retried like one, and reported as SluiceConnectionError when retries run out
 * (until 2026-12-04 a raw TypeError, not retried, and the CLI exited 1 instead of 3; found by an audit).
 */
describe('an answer whose body is lost', () => {
  it('a connection reset while the body is read is retried', async () => {
    let calls = 0;
    const client = new SluiceClient({
      endpoint: 'http://sluice.test:3000',
      auth: 'none',
      sendLingerMs: 0,
      sleep: async () => undefined,
      fetch: async () => {
        calls++;
        if (calls === 1) {
          // Headers arrived, then the connection was reset before the body: no answer was read.
          const body = new ReadableStream({
            start(controller) {
              controller.error(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }));
            },
          });
          return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
        }
        return new Response(JSON.stringify({ results: [{ receiptHandle: 'h1', status: 'committed' }] }), { status: 200 });
      },
    });
    const outcome = await client.commit('g', ['h1']);
    expect(calls).toBe(2);
    expect(outcome.results).toEqual([{ receiptHandle: 'h1', status: 'committed' }]);
  });

  it('one lost on every attempt ends as SluiceConnectionError', async () => {
    let calls = 0;
    const client = new SluiceClient({
      endpoint: 'http://sluice.test:3000',
      auth: 'none',
      sendLingerMs: 0,
      sleep: async () => undefined,
      fetch: async () => {
        calls++;
        const body = new ReadableStream({ start: (controller) => controller.error(new TypeError('terminated')) });
        return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await expect(client.commit('g', ['h1'])).rejects.toBeInstanceOf(SluiceConnectionError);
    expect(calls).toBeGreaterThan(1);
  });
});
