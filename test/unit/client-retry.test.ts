/** The client's retry policy: what is retried, how long it waits, and that retried sends stay idempotent. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY,
  SluiceApiError,
  SluiceClient,
  SluiceConnectionError,
  backoffDelay,
  parseRetryAfter,
  retryDelay,
} from '../../lib/client/index.js';

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: `urn:sluice:problem:${code}`, title: code, status, detail: `${code} detail`, code }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
const refused = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });

/** A client whose fetch plays a script of answers and whose sleeps are recorded, not waited. */
function scripted(answers: Array<Response | Error>, options: { random?: () => number; maxAttempts?: number } = {}) {
  const calls: Call[] = [];
  const sleeps: number[] = [];
  let ids = 0;
  const client = new SluiceClient({
    endpoint: 'http://sluice.test:3000/',
    token: 'tok',
    fetch: async (input, init) => {
      calls.push({
        url: String(input),
        method: init?.method ?? 'GET',
        headers: init?.headers as Record<string, string>,
        body: init?.body as string | undefined,
      });
      const next = answers.shift();
      if (!next) throw new Error('script ran out');
      if (next instanceof Error) throw next;
      return next;
    },
    sleep: async (ms) => void sleeps.push(ms),
    random: options.random ?? (() => 0.5),
    newId: () => `id-${++ids}`,
    retry: { maxAttempts: options.maxAttempts ?? 4 },
  });
  return { client, calls, sleeps };
}

describe('backoff', () => {
  it('grows exponentially, is capped, and is jittered over [0, ceiling)', () => {
    const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, opts, () => 0.999999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay(3, opts, () => 0)).toBe(0);
    expect(backoffDelay(3, opts, () => 0.5)).toBe(200);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter(new Date(now + 7000).toUTCString(), now)).toBe(7000);
    expect(parseRetryAfter(new Date(now - 7000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('waits at least Retry-After (capped), never less than the backoff', () => {
    const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 5000, maxRetryAfterMs: 10_000 };
    expect(retryDelay(1, 2000, opts, () => 0.5)).toBe(2000);
    expect(retryDelay(1, 60_000, opts, () => 0.5)).toBe(10_000);
    expect(retryDelay(6, 10, opts, () => 0.5)).toBe(1600);
    expect(retryDelay(2, undefined, opts, () => 0.5)).toBe(100);
  });
});

describe('SluiceClient retries', () => {
  it('retries 429 and 503, honouring Retry-After, then returns the answer', async () => {
    const { client, calls, sleeps } = scripted([
      problem(429, 'Throttled', { 'retry-after': '2' }),
      problem(503, 'ServiceUnavailable'),
      json(201, { messageId: 'm1', state: 'deliverable' }),
    ]);
    const result = await client.send('orders', { body: 'hi' });
    expect(result).toEqual({ messageId: 'm1', state: 'deliverable' });
    expect(calls).toHaveLength(3);
    // First wait: Retry-After 2 s; second: jittered backoff of attempt 2 (0.5 × 200 ms).
    expect(sleeps).toEqual([2000, 100]);
  });

  it('sends the same dedupId on every attempt, and keeps the caller’s own', async () => {
    const { client, calls } = scripted([
      problem(503, 'ServiceUnavailable'),
      json(201, { messageId: 'm1', state: 'deliverable' }),
      json(201, { messageId: 'm2', state: 'deliverable' }),
    ]);
    await client.send('orders', { body: 'once' });
    await client.send('orders', { body: 'mine', dedupId: 'caller-chosen' });
    const bodies = calls.map((c) => JSON.parse(c.body ?? '{}') as { dedupId: string });
    expect(bodies[0]!.dedupId).toBe('id-1');
    expect(bodies[1]!.dedupId).toBe('id-1');
    expect(bodies[2]!.dedupId).toBe('caller-chosen');
    expect(calls[0]!.body).toBe(calls[1]!.body);
  });

  it('gives every batch entry its own dedupId', async () => {
    const { client, calls } = scripted([json(200, { results: [] })]);
    await client.sendBatch('orders', [{ body: 'a' }, { body: 'b', dedupId: 'x' }, { body: new Uint8Array([0, 255]) }]);
    const sent = JSON.parse(calls[0]!.body ?? '{}') as { entries: Array<{ dedupId: string; body: string; encoding?: string }> };
    expect(sent.entries.map((e) => e.dedupId)).toEqual(['id-1', 'x', 'id-2']);
    expect(sent.entries[2]).toMatchObject({ body: 'AP8=', encoding: 'base64' });
  });

  it('does not retry other errors and throws them with the problem fields', async () => {
    const { client, calls } = scripted([
      new Response(
        JSON.stringify({
          type: 'urn:sluice:problem:InvalidArgument',
          title: 'Invalid argument',
          status: 400,
          detail: 'Invalid body: body Invalid input.',
          code: 'InvalidArgument',
          errors: [{ path: 'body', message: 'Invalid input' }],
        }),
        { status: 400, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-1' } },
      ),
    ]);
    const error = await client.send('orders', { body: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'InvalidArgument',
      detail: 'Invalid body: body Invalid input.',
      errors: [{ path: 'body', message: 'Invalid input' }],
      requestId: 'req-1',
      method: 'POST',
      url: 'http://sluice.test:3000/v1/topics/orders/messages',
    });
    expect(calls).toHaveLength(1);
  });

  it('gives up after maxAttempts and throws the last answer', async () => {
    const { client, calls, sleeps } = scripted(
      [problem(429, 'Throttled', { 'retry-after': '1' }), problem(429, 'Throttled', { 'retry-after': '1' }), problem(429, 'Throttled', { 'retry-after': '1' })],
      { maxAttempts: 3 },
    );
    const error = await client.getGroup('g').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'Throttled', retryAfterSeconds: 1 });
    expect(calls).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('retries lost connections and then reports the endpoint as unreachable', async () => {
    const recovered = scripted([refused(), json(200, { status: 'ok' })]);
    await expect(recovered.client.health()).resolves.toEqual({ status: 'ok' });
    expect(recovered.calls).toHaveLength(2);

    const { client, calls } = scripted([refused(), refused()], { maxAttempts: 2 });
    const error = await client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceConnectionError);
    expect(error).toMatchObject({ endpoint: 'http://sluice.test:3000/', reason: 'ECONNREFUSED' });
    expect(calls).toHaveLength(2);
  });

  it('turns a non-problem error body (e.g. API Gateway’s) into a SluiceApiError', async () => {
    const { client } = scripted([json(403, { message: 'Forbidden' })]);
    await expect(client.listTopics()).rejects.toMatchObject({ status: 403, code: 'Forbidden', detail: 'Forbidden' });
  });

  it('reads the message of a Lambda function URL’s own 403 ({"Message": …}, capital M)', async () => {
    const message = 'Forbidden. For troubleshooting Function URL authorization issues, see: https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html';
    const { client } = scripted([json(403, { Message: message })]);
    await expect(client.listTopics()).rejects.toMatchObject({ status: 403, code: 'Forbidden', detail: message });
  });

  it('stops retrying when the caller aborts', async () => {
    const controller = new AbortController();
    let calls = 0;
    const client = new SluiceClient({
      endpoint: 'http://sluice.test:3000',
      fetch: async () => {
        calls++;
        controller.abort(new Error('caller gave up'));
        return problem(503, 'ServiceUnavailable', { 'retry-after': '5' });
      },
    });
    await expect(client.health({ signal: controller.signal })).rejects.toThrow('caller gave up');
    expect(calls).toBe(1);
  });

  it('builds URLs, query strings and auth headers', async () => {
    const { client, calls } = scripted([json(200, { messages: [], nextToken: null }), json(200, { topics: [], nextToken: null })]);
    await client.findMessages('orders', 'order 42/x', { limit: 5 });
    await client.listTopics();
    expect(calls[0]!.url).toBe('http://sluice.test:3000/v1/topics/orders/messages?key=order%2042%2Fx&limit=5');
    expect(calls[0]!.headers).toMatchObject({ authorization: 'Bearer tok', accept: 'application/json' });
    expect(calls[0]!.headers['content-type']).toBeUndefined();
    expect(calls[1]!.url).toBe('http://sluice.test:3000/v1/topics');
  });
});
