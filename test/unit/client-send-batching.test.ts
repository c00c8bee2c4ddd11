/**
 * `SluiceClient.send` batching (lib/client/send-batcher.ts): sends to a topic within the linger go
 * out as one batch request in call order, one request per topic at a time; each caller gets its
 * own result or error; throttled entries go again in order; a refused batch is sent entry by entry.
 */
import { describe, expect, it } from 'vitest';
import { SluiceApiError, SluiceClient } from '../../lib/client/index.js';

interface Call {
  path: string;
  body: { entries?: Array<{ body: string; dedupId: string }>; body?: string; dedupId?: string };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const problemOf = (status: number, code: string) => ({ type: `urn:sluice:problem:${code}`, title: code, status, detail: `${code} detail`, code });

/**
 * A fake API: `answer` decides each call's response; records every call, the number of requests in
 * flight at once, and answers after a tick so that concurrent sends can meet.
 */
function fakeApi(answer: (call: Call, n: number) => Response, options: { lingerMs?: number; delayMs?: (n: number) => number } = {}) {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let ids = 0;
  const client = new SluiceClient({
    endpoint: 'http://sluice.test:3000',
    token: 'tok',
    newId: () => `dedup-${++ids}`,
    sleep: async () => undefined,
    random: () => 0.5,
    ...(options.lingerMs === undefined ? {} : { sendLingerMs: options.lingerMs }),
    fetch: async (input, init) => {
      const call: Call = { path: new URL(String(input)).pathname, body: JSON.parse(String(init?.body ?? '{}')) };
      calls.push(call);
      const n = calls.length;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs?.(n) ?? 5));
      inFlight--;
      return answer(call, n);
    },
  });
  return { client, calls, maxInFlight: () => maxInFlight };
}

/** Stores every entry: the message id is `m-<body>`. */
const storeAll = (call: Call) =>
  call.body.entries
    ? json(200, { results: call.body.entries.map((e, index) => ({ index, messageId: `m-${e.body}`, state: 'deliverable' })) })
    : json(201, { messageId: `m-${call.body.body}`, state: 'deliverable' });

describe('SluiceClient send batching', () => {
  it('sends concurrent sends to one topic as one batch in call order, each caller with its own result', async () => {
    const api = fakeApi(storeAll);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => api.client.send('orders', { body: `b${i}` })));
    expect(results.map((r) => r.messageId)).toEqual(Array.from({ length: 10 }, (_, i) => `m-b${i}`));
    expect(api.calls).toHaveLength(1);
    expect(api.calls[0]!.path).toBe('/v1/topics/orders/messages/batch');
    expect(api.calls[0]!.body.entries!.map((e) => e.body)).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    // Every entry has its dedupId before the request, so a retried batch is stored once.
    expect(api.calls[0]!.body.entries!.every((e) => /^dedup-\d+$/.test(e.dedupId))).toBe(true);
  });

  it('a lone send is a single send request; batch: false, a signal or sendLingerMs 0 send alone at once', async () => {
    const api = fakeApi(storeAll);
    expect(await api.client.send('orders', { body: 'one' })).toMatchObject({ messageId: 'm-one' });
    await Promise.all([api.client.send('orders', { body: 'x' }, { batch: false }), api.client.send('orders', { body: 'y' }, { signal: new AbortController().signal })]);
    expect(api.calls.map((c) => c.path)).toEqual(['/v1/topics/orders/messages', '/v1/topics/orders/messages', '/v1/topics/orders/messages']);

    const off = fakeApi(storeAll, { lingerMs: 0 });
    await Promise.all([off.client.send('orders', { body: 'p' }), off.client.send('orders', { body: 'q' })]);
    expect(off.calls.map((c) => c.path)).toEqual(['/v1/topics/orders/messages', '/v1/topics/orders/messages']);
    expect(() => new SluiceClient({ endpoint: 'http://x', sendLingerMs: -1 })).toThrow(RangeError);
  });

  it('closes a batch at 100 entries and at the 1 MiB request limit; one request per topic at a time, in order', async () => {
    const api = fakeApi(storeAll);
    const sent = await Promise.all(Array.from({ length: 250 }, (_, i) => api.client.send('orders', { body: `n${i}` })));
    expect(sent.map((r) => r.messageId)).toEqual(Array.from({ length: 250 }, (_, i) => `m-n${i}`));
    expect(api.calls.map((c) => c.body.entries!.length)).toEqual([100, 100, 50]);
    expect(api.calls.flatMap((c) => c.body.entries!.map((e) => e.body))).toEqual(Array.from({ length: 250 }, (_, i) => `n${i}`));
    expect(api.maxInFlight()).toBe(1);

    // Three bodies of 400 KB: two fit one request (≈ 800 KB), the third would pass 1 MiB.
    const big = fakeApi(storeAll);
    const body = (c: string) => c.repeat(400_000);
    await Promise.all(['a', 'b', 'c'].map((c) => big.client.send('orders', { body: body(c) })));
    expect(big.calls.map((c) => c.body.entries?.length ?? 1)).toEqual([2, 1]);
    expect(big.calls.map((c) => c.path)).toEqual(['/v1/topics/orders/messages/batch', '/v1/topics/orders/messages']);
  });

  it('keeps topics apart: each topic its own batch', async () => {
    const api = fakeApi(storeAll);
    await Promise.all([api.client.send('a', { body: '1' }), api.client.send('b', { body: '2' }), api.client.send('a', { body: '3' })]);
    expect(api.calls.map((c) => [c.path, c.body.entries?.map((e) => e.body) ?? [c.body.body]])).toEqual(
      expect.arrayContaining([
        ['/v1/topics/a/messages/batch', ['1', '3']],
        ['/v1/topics/b/messages', ['2']],
      ]),
    );
  });

  it("rejects only the caller whose entry failed, with that entry's problem", async () => {
    const api = fakeApi((call) =>
      json(200, {
        results: call.body.entries!.map((e, index) => (e.body === 'bad' ? { index, error: problemOf(409, 'DuplicateShardKey') } : { index, messageId: `m-${e.body}`, state: 'deliverable' })),
      }),
    );
    const outcomes = await Promise.allSettled(['ok1', 'bad', 'ok2'].map((b) => api.client.send('orders', { body: b })));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (outcomes[1] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(SluiceApiError);
    expect(error).toMatchObject({ status: 409, code: 'DuplicateShardKey', method: 'POST', url: 'http://sluice.test:3000/v1/topics/orders/messages/batch' });
  });

  it('sends throttled entries again, together, in order, with their dedupIds, before later batches of the topic', async () => {
    const seen: string[][] = [];
    const api = fakeApi((call, n) => {
      seen.push(call.body.entries?.map((e) => `${e.body}:${e.dedupId}`) ?? [`${call.body.body}:${call.body.dedupId}`]);
      if (n === 1) {
        return json(200, {
          results: call.body.entries!.map((e, index) => (index % 2 === 1 ? { index, error: problemOf(429, 'Throttled') } : { index, messageId: `m-${e.body}`, state: 'deliverable' })),
        });
      }
      return storeAll(call);
    }, { delayMs: (n) => (n === 1 ? 50 : 5) });
    const first = Array.from({ length: 4 }, (_, i) => api.client.send('orders', { body: `t${i}` }));
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first batch lingered out (5 ms) and is in flight (50 ms)
    const later = api.client.send('orders', { body: 'later' });
    const results = await Promise.all([...first, later]);
    expect(results.map((r) => r.messageId)).toEqual(['m-t0', 'm-t1', 'm-t2', 'm-t3', 'm-later']);
    expect(seen[0]).toEqual(['t0:dedup-1', 't1:dedup-2', 't2:dedup-3', 't3:dedup-4']);
    expect(seen[1]).toEqual(['t1:dedup-2', 't3:dedup-4']);
    expect(seen[2]).toEqual(['later:dedup-5']);
  });

  it('gives up on a throttled entry after the retry attempts, with its 429', async () => {
    const api = fakeApi((call) => json(200, { results: call.body.entries!.map((_e, index) => ({ index, error: problemOf(429, 'Throttled') })) }));
    const outcomes = await Promise.allSettled([api.client.send('orders', { body: 'a' }), api.client.send('orders', { body: 'b' })]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as SluiceApiError).code : 'ok'))).toEqual(['Throttled', 'Throttled']);
    expect(api.calls).toHaveLength(4); // DEFAULT_RETRY.maxAttempts
  });

  it('sends a batch refused as invalid again entry by entry: only the bad message fails, with its own problem', async () => {
    const api = fakeApi((call) => {
      if (call.body.entries) return new Response(JSON.stringify(problemOf(400, 'InvalidArgument')), { status: 400, headers: { 'content-type': 'application/problem+json' } });
      if (call.body.body === 'bad') return new Response(JSON.stringify(problemOf(400, 'InvalidArgument')), { status: 400, headers: { 'content-type': 'application/problem+json' } });
      return storeAll(call);
    });
    const outcomes = await Promise.allSettled(['g1', 'bad', 'g2'].map((b) => api.client.send('orders', { body: b })));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(api.calls.map((c) => c.path)).toEqual(['/v1/topics/orders/messages/batch', '/v1/topics/orders/messages', '/v1/topics/orders/messages', '/v1/topics/orders/messages']);
  });

  it('fails every entry of a batch the server refuses for all (404), and flush() sends what lingers', async () => {
    const api = fakeApi((call) =>
      call.path.endsWith('/batch')
        ? new Response(JSON.stringify(problemOf(404, 'TopicNotFound')), { status: 404, headers: { 'content-type': 'application/problem+json' } })
        : storeAll(call),
      { lingerMs: 60_000 },
    );
    const pending = [api.client.send('gone', { body: '1' }), api.client.send('gone', { body: '2' })].map((p) => p.catch((e: unknown) => e));
    await api.client.flush();
    expect((await Promise.all(pending)).map((e) => (e as SluiceApiError).code)).toEqual(['TopicNotFound', 'TopicNotFound']);
  });
});
