/**
 * An answer whose body is lost (headers arrived, then a reset or the time-out while reading) is a
 * lost connection (until 2026-12-04 a raw TypeError, and the CLI exited 1 instead of 3; found by an
 * audit). The server did the call, so only a call safe to repeat is sent again (sends with their dedup
 * ids, commits, visibility changes, GET/PUT/PATCH); a seek, purge, receive, redrive, rotation or DELETE
 * ends as SluiceConnectionError at once (a review: a repeated rotation would drop the secret in use).
 */
import { describe, expect, it } from 'vitest';
import { SluiceClient, SluiceConnectionError } from '../../lib/client/index.js';

/** A 200 whose body stream fails before any byte: the connection reset after the headers. */
const bodyLost = () =>
  new Response(
    new ReadableStream({
      start: (controller) => controller.error(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) })),
    }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  );

/** A client whose n-th fetch (1-based) answers `answer(n)`; `calls()` counts them. */
const clientAnswering = (answer: (n: number) => Response) => {
  let calls = 0;
  const client = new SluiceClient({ endpoint: 'http://sluice.test:3000', auth: 'none', sendLingerMs: 0, sleep: async () => undefined, fetch: async () => answer(++calls) });
  return { client, calls: () => calls };
};

describe('an answer whose body is lost', () => {
  it('a connection reset while the body is read is retried', async () => {
    const { client, calls } = clientAnswering((n) => (n === 1 ? bodyLost() : new Response(JSON.stringify({ results: [{ receiptHandle: 'h1', status: 'committed' }] }), { status: 200 })));
    const outcome = await client.commit('g', ['h1']);
    expect(calls()).toBe(2);
    expect(outcome.results).toEqual([{ receiptHandle: 'h1', status: 'committed' }]);
  });

  it('a call that would act twice is not repeated: a seek\'s lost answer is a SluiceConnectionError at once', async () => {
    const { client, calls } = clientAnswering(() => bodyLost());
    await expect(client.seek('g', { to: 'latest' })).rejects.toBeInstanceOf(SluiceConnectionError);
    await expect(client.rotateGroupSecret('g')).rejects.toBeInstanceOf(SluiceConnectionError);
    expect(calls()).toBe(2);
  });

  it('one lost on every attempt ends as SluiceConnectionError', async () => {
    const { client, calls } = clientAnswering(() => bodyLost());
    await expect(client.commit('g', ['h1'])).rejects.toBeInstanceOf(SluiceConnectionError);
    expect(calls()).toBeGreaterThan(1);
  });
});
