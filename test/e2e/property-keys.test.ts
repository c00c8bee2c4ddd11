/**
 * Any object key a client can send either round-trips exactly through send → receive → query,
 * or is refused with a 400 naming its path (SPEC §3): `constructor`, `toString`, … are ordinary
 * keys; `__proto__` and lone surrogates are refused; nothing is dropped, nothing answers 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { client, startRuntime, type Reply } from '../helpers/local.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;
let checker: TestChecker;

/** Names that mean something to JavaScript objects. */
const SPECIAL = [
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'prototype',
  'then',
  'length',
  'toJSON',
];

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  checker = await startChecker(() => 'commit');
  expect((await api.put('/v1/topics/props', { type: 'standard' })).status).toBe(200);
  expect((await api.put('/v1/topics/props-out', { type: 'standard' })).status).toBe(200);
  expect((await api.put('/v1/groups/props-reader', { subscriptions: [{ topic: 'props' }] })).status).toBe(200);
  expect((await api.put('/v1/groups/props-out-reader', { subscriptions: [{ topic: 'props-out' }] })).status).toBe(200);
  const producer = await api.put('/v1/producers/props-shop', { checkerUrl: checker.url });
  expect(producer.status).toBe(200);
  checker.secrets = [producer.body.signingSecret];
});
afterAll(async () => {
  await runtime?.stop();
  await checker?.close();
});

/** An object with exactly these own keys (Object.fromEntries defines `__proto__` as an own key, as JSON.parse does). */
const objectOf = (entries: Array<[string, string]>) => Object.fromEntries(entries) as Record<string, string>;
const sorted = (value: Record<string, string>) => Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Receives from `group` (committing all it gets) until every one of `messageIds` came; answers them by id. */
async function receiveIds(group: string, messageIds: string[]) {
  const got = new Map<string, { properties: Record<string, string> }>();
  for (let attempt = 0; attempt < 10 && messageIds.some((id) => !got.has(id)); attempt++) {
    const res = await api.post(`/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 1 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const commits = res.body.messages.map((m: { receiptHandle: string }) => ({ receiptHandle: m.receiptHandle }));
    if (commits.length > 0) expect((await api.post(`/v1/groups/${group}/commit`, { entries: commits })).status).toBe(200);
    for (const m of res.body.messages) got.set(m.messageId, m);
  }
  const missing = messageIds.filter((id) => !got.has(id));
  if (missing.length > 0) throw new Error(`messages ${missing.join(', ')} were not received`);
  return got;
}

const receiveOne = async (group: string, messageId: string) => (await receiveIds(group, [messageId])).get(messageId) as { properties: Record<string, string> };

function expectRefused(res: Reply, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe('InvalidArgument');
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  expect(res.body.detail).toContain(path);
}

// fast-check's strings include `__proto__` now and then (its "dangerous strings"): Sluice refuses that
// key with a 400 (the next test), so the round trip leaves it out.
const key = fc
  .oneof(
    { weight: 2, arbitrary: fc.constantFrom(...SPECIAL) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 16 }) },
  )
  .filter((k) => k !== '__proto__');
const entries = fc.uniqueArray(fc.tuple(key, fc.string({ unit: 'binary', maxLength: 32 })), { minLength: 1, maxLength: 8, selector: ([k]) => k });

describe('property keys', () => {
  it('round-trip exactly through send, receive and query for any key (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(entries, async (pairs) => {
        const properties = objectOf(pairs);
        const sent = await api.post('/v1/topics/props/messages', { body: 'p', properties });
        expect(sent.status, JSON.stringify(sent.body)).toBe(201);
        const delivered = await receiveOne('props-reader', sent.body.messageId);
        expect(sorted(delivered.properties)).toEqual(sorted(properties));
        const queried = await api.get(`/v1/topics/props/messages/${sent.body.messageId}`);
        expect(queried.status).toBe(200);
        expect(sorted(queried.body.properties)).toEqual(sorted(properties));
      }),
      { numRuns: 25 },
    );
    // 25 send → receive → query round trips: ~5 s alone; 60 s ran out in a fresh clone's parallel run
    // while the CDK bundle test and the 256 KiB limit tests held both cores and DynamoDB Local.
  }, 240_000);

  it('refuses __proto__ with its path wherever it is, whatever its value, and stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.object(), fc.constant({ body: 'injected' })), entries, async (value, pairs) => {
        const before = (await api.get('/v1/groups/props-reader')).body.backlog;
        const properties = objectOf([...pairs, ['__proto__', value as string]]);
        expectRefused(await api.post('/v1/topics/props/messages', { body: 'p', properties }), 'properties/__proto__');
        expectRefused(await api.post('/v1/topics/props/messages/batch', { entries: [{ body: 'ok' }, { body: 'p', properties }] }), 'entries/1/properties/__proto__');
        expect((await api.get('/v1/groups/props-reader')).body.backlog).toBe(before);
      }),
      { numRuns: 10 },
    );
  });

  it('refuses __proto__ as a top-level key and as a query parameter', async () => {
    expectRefused(await api.post('/v1/topics/props/messages', JSON.parse('{"body":"p","__proto__":{"tag":"x"}}')), '__proto__');
    const query = await api.get('/v1/topics?__proto__=x');
    expect(query.status).toBe(400);
    expect(query.body.errors.map((e: { path: string }) => e.path)).toContain('query');
  });

  it('refuses lone surrogates in keys and values with their path', async () => {
    expectRefused(await api.post('/v1/topics/props/messages', { body: 'p', properties: { ['a\ud800']: 'x' } }), 'properties/a\ud800');
    expectRefused(await api.post('/v1/topics/props/messages', { body: 'p', properties: { a: '\udc00b' } }), 'properties/a');
    expectRefused(await api.post('/v1/topics/props/messages', { body: '\ud83d' }), 'body');
    // A well-formed pair is one character, not a surrogate.
    expect((await api.post('/v1/topics/props/messages', { body: '\ud83d\ude00' })).status).toBe(201);
    await receiveOne('props-reader', (await api.post('/v1/topics/props/messages', { body: 'flush' })).body.messageId);
  });

  it('round-trips constructor on batch sends, publish entries and transactional sends', async () => {
    const properties = objectOf([['constructor', 'y'], ['toString', 'z'], ['hasOwnProperty', 'w']]);
    const batch = await api.post('/v1/topics/props/messages/batch', { entries: [{ body: 'b1', properties }, { body: 'b2', properties }] });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const ids = batch.body.results.map((r: { messageId: string }) => r.messageId);
    expect(ids).toEqual([expect.any(String), expect.any(String)]);
    const delivered = await receiveIds('props-reader', ids);
    for (const id of ids) expect(sorted(delivered.get(id)?.properties ?? {})).toEqual(sorted(properties));

    const input = await api.post('/v1/topics/props/messages', { body: 'in' });
    let handle: string | undefined;
    for (let attempt = 0; attempt < 10 && !handle; attempt++) {
      const res = await api.post('/v1/groups/props-reader/receive', { maxMessages: 10, waitSeconds: 1 });
      handle = res.body.messages.find((m: { messageId: string }) => m.messageId === input.body.messageId)?.receiptHandle;
    }
    const commit = await api.post('/v1/groups/props-reader/commit', { entries: [{ receiptHandle: handle, publish: [{ topic: 'props-out', body: 'out', properties }] }] });
    expect(commit.body, JSON.stringify(commit.body)).toEqual({ results: [{ receiptHandle: handle, status: 'committed' }] });
    const published = await api.post('/v1/groups/props-out-reader/receive', { maxMessages: 10, waitSeconds: 2 });
    expect(published.body.messages.map((m: { properties: Record<string, string> }) => sorted(m.properties))).toEqual([sorted(properties)]);

    const half = await api.post('/v1/topics/props/messages', { body: 'half', properties, transaction: { producerGroup: 'props-shop', checkAfterSeconds: 600 } });
    expect(half.status, JSON.stringify(half.body)).toBe(201);
    expect((await api.post(`/v1/transactions/${half.body.transactionId}/commit`, undefined)).status).toBe(200);
    expect(sorted((await receiveOne('props-reader', half.body.messageId)).properties)).toEqual(sorted(properties));
    expect(sorted((await api.get(`/v1/topics/props/messages/${half.body.messageId}`)).body.properties)).toEqual(sorted(properties));
  });
});

describe('message keys', () => {
  it('accepts a key given twice, keeps the keys as sent and finds the message once by it', async () => {
    for (const extra of [{}, { delaySeconds: 1 }]) {
      const sent = await api.post('/v1/topics/props/messages', { body: 'twice', keys: ['dup', 'other', 'dup'], ...extra });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect((await api.get(`/v1/topics/props/messages/${sent.body.messageId}`)).body.keys).toEqual(['dup', 'other', 'dup']);
    }
    const found = (await api.get('/v1/topics/props/messages?key=dup')).body.messages;
    expect(found).toHaveLength(2);
    expect(new Set(found.map((m: { messageId: string }) => m.messageId)).size).toBe(2);
  });
});
