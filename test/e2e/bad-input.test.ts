/**
 * Bad input on every route: a precise 4xx problem+json, never a 5xx, and nothing changes.
 * Authentication comes first: without a valid token every route but /health answers 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { routes } from '../../functions/api/routes.js';
import { client, startRuntime, type Reply } from '../helpers/local.js';

let runtime: LocalRuntime;
let api: ReturnType<typeof client>;
let receipt: string;
/** A well-formed handle of a message committed in beforeAll: commits that name it fail only where the test says. */
let spent: string;
const SPENT = '<spent receipt handle>';

const long = 'x'.repeat(129);

beforeAll(async () => {
  runtime = await startRuntime();
  api = client(runtime.url);
  await api.put('/v1/topics/orders', { type: 'standard' });
  await api.put('/v1/topics/ledger', { type: 'fifo' });
  await api.put('/v1/topics/sequenced', { type: 'fifo', sequenced: true });
  await api.put('/v1/groups/billing', { subscriptions: [{ topic: 'orders' }] });
  await api.put('/v1/topics/og-a', { type: 'fifo', orderGroup: 'og' });
  await api.put('/v1/topics/og-b', { type: 'fifo', orderGroup: 'og' });
  await api.put('/v1/groups/ordered', { subscriptions: [{ topic: 'og-a' }, { topic: 'og-b' }] });
  await api.post('/v1/topics/orders/messages', { body: 'seed' });
  // A lease that cannot expire during the file: its expiry would move stats between snapshots.
  receipt = (await api.post('/v1/groups/billing/receive', { maxMessages: 1, visibilityTimeoutSeconds: 43_200 })).body.messages[0].receiptHandle;
  // Handles are sealed (opaque ids): a handle that parses can only come from a receive.
  await api.post('/v1/topics/orders/messages', { body: 'spent' });
  spent = (await api.post('/v1/groups/billing/receive', { maxMessages: 1 })).body.messages[0].receiptHandle;
  expect((await api.post('/v1/groups/billing/commit', { entries: [{ receiptHandle: spent }] })).body.results[0].status).toBe('committed');
});
afterAll(async () => runtime?.stop());

function expectProblem(res: Reply, status: number, code: string, path?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  if (path !== undefined) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

const cases: Array<[string, string, string, unknown, number, string, string?]> = [
  // [name, method, path, body, status, code, error path]
  ['malformed JSON', 'PUT', '/v1/topics/t1', '{"type":', 400, 'InvalidArgument'],
  ['empty body', 'PUT', '/v1/topics/t1', '', 400, 'InvalidArgument'],
  ['unknown field', 'PUT', '/v1/topics/t1', { type: 'standard', colour: 'red' }, 400, 'InvalidArgument'],
  ['wrong type', 'PUT', '/v1/topics/t1', { type: 'lifo' }, 400, 'InvalidArgument', 'type'],
  ['retention too short', 'PUT', '/v1/topics/t1', { type: 'standard', retentionSeconds: 10 }, 400, 'InvalidArgument', 'retentionSeconds'],
  ['orderGroup on standard', 'PUT', '/v1/topics/t1', { type: 'standard', orderGroup: 'g' }, 400, 'InvalidArgument', 'orderGroup'],
  ['sequenced on standard', 'PUT', '/v1/topics/t1', { type: 'standard', sequenced: true }, 400, 'InvalidArgument', 'sequenced'],
  ['sequenced with orderGroup', 'PUT', '/v1/topics/t1', { type: 'fifo', orderGroup: 'g', sequenced: true }, 400, 'InvalidArgument', 'sequenced'],
  ['sequenced not a boolean', 'PUT', '/v1/topics/t1', { type: 'fifo', sequenced: 'yes' }, 400, 'InvalidArgument', 'sequenced'],
  ['making a live FIFO topic sequenced', 'PUT', '/v1/topics/ledger', { type: 'fifo', sequenced: true, retentionSeconds: 600 }, 409, 'Conflict'],
  ['making a sequenced topic chained', 'PUT', '/v1/topics/sequenced', { type: 'fifo', retentionSeconds: 600 }, 409, 'Conflict'],
  ['over-long name', 'PUT', `/v1/topics/${long}`, { type: 'standard' }, 400, 'InvalidArgument', 'path/topic'],
  ['bad characters in name', 'PUT', '/v1/topics/a%20b', { type: 'standard' }, 400, 'InvalidArgument', 'path/topic'],
  ['changing a topic type', 'PUT', '/v1/topics/orders', { type: 'fifo' }, 409, 'Conflict'],
  ['array body', 'PUT', '/v1/topics/t1', [1, 2], 400, 'InvalidArgument'],
  ['missing topic', 'GET', '/v1/topics/nope', undefined, 404, 'TopicNotFound'],
  ['bad topic name', 'GET', `/v1/topics/${long}`, undefined, 400, 'InvalidArgument'],
  ['delete missing topic', 'DELETE', '/v1/topics/nope', undefined, 404, 'TopicNotFound'],
  ['limit zero', 'GET', '/v1/topics?limit=0', undefined, 400, 'InvalidArgument', 'query/limit'],
  ['limit not a number', 'GET', '/v1/topics?limit=ten', undefined, 400, 'InvalidArgument', 'query/limit'],
  ['garbage page token', 'GET', '/v1/topics?nextToken=zzz', undefined, 400, 'InvalidArgument', 'nextToken'],
  ['unknown query parameter', 'GET', '/v1/groups?colour=red', undefined, 400, 'InvalidArgument'],
  ['no subscriptions', 'PUT', '/v1/groups/g1', { subscriptions: [] }, 400, 'InvalidArgument', 'subscriptions'],
  ['subscription to a missing topic', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'nope' }] }, 404, 'TopicNotFound'],
  ['bad delivery mode', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], deliveryMode: 'fast' }, 400, 'InvalidArgument', 'deliveryMode'],
  ['maxDeliveries zero', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], maxDeliveries: 0 }, 400, 'InvalidArgument', 'maxDeliveries'],
  ['retryPolicy initialSeconds negative', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { initialSeconds: -1 } }, 400, 'InvalidArgument', 'retryPolicy/initialSeconds'],
  ['retryPolicy initialSeconds over 3600', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { initialSeconds: 3601, maxSeconds: 43200 } }, 400, 'InvalidArgument', 'retryPolicy/initialSeconds'],
  ['retryPolicy initialSeconds not an integer', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { initialSeconds: 1.5 } }, 400, 'InvalidArgument', 'retryPolicy/initialSeconds'],
  ['retryPolicy multiplier below 1', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { multiplier: 0.5 } }, 400, 'InvalidArgument', 'retryPolicy/multiplier'],
  ['retryPolicy multiplier over 10', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { multiplier: 11 } }, 400, 'InvalidArgument', 'retryPolicy/multiplier'],
  ['retryPolicy multiplier a string', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { multiplier: '2' } }, 400, 'InvalidArgument', 'retryPolicy/multiplier'],
  ['retryPolicy maxSeconds over 43200', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { maxSeconds: 43201 } }, 400, 'InvalidArgument', 'retryPolicy/maxSeconds'],
  ['retryPolicy maxSeconds below initialSeconds', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { initialSeconds: 60, maxSeconds: 30 } }, 400, 'InvalidArgument', 'retryPolicy/maxSeconds'],
  ['retryPolicy initialSeconds above the default maxSeconds', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { initialSeconds: 601 } }, 400, 'InvalidArgument', 'retryPolicy/maxSeconds'],
  ['retryPolicy with an unknown field', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: { levels: [1, 5] } }, 400, 'InvalidArgument', 'retryPolicy'],
  ['retryPolicy not an object', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], retryPolicy: 5 }, 400, 'InvalidArgument', 'retryPolicy'],
  ['visibility too long', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], visibilityTimeoutSeconds: 43201 }, 400, 'InvalidArgument', 'visibilityTimeoutSeconds'],
  ['subscribing to its own dead-letter topic', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], deadLetterTopic: 'orders' }, 400, 'InvalidArgument'],
  ['a FIFO topic as the dead-letter topic', 'PUT', '/v1/groups/g1', { subscriptions: [{ topic: 'orders' }], deadLetterTopic: 'ledger' }, 400, 'InvalidArgument', 'deadLetterTopic'],
  ['missing group', 'GET', '/v1/groups/nope', undefined, 404, 'GroupNotFound'],
  ['delete a missing group', 'DELETE', '/v1/groups/nope', undefined, 404, 'GroupNotFound'],
  ['delete a group with a bad name', 'DELETE', '/v1/groups/a%24b', undefined, 400, 'InvalidArgument', 'path/group'],
  ['list groups with limit 101', 'GET', '/v1/groups?limit=101', undefined, 400, 'InvalidArgument', 'query/limit'],
  ['list groups with a foreign page token', 'GET', `/v1/groups?nextToken=${Buffer.from(JSON.stringify({ pk: 'TOPIC', sk: 'orders' })).toString('base64url')}`, undefined, 400, 'InvalidArgument', 'nextToken'],
  ['send without body', 'POST', '/v1/topics/orders/messages', { tag: 'x' }, 400, 'InvalidArgument', 'body'],
  ['send with numeric body', 'POST', '/v1/topics/orders/messages', { body: 5 }, 400, 'InvalidArgument', 'body'],
  ['send with bad base64', 'POST', '/v1/topics/orders/messages', { body: '***', encoding: 'base64' }, 400, 'InvalidArgument', 'body'],
  ['send with delay and deliverAt', 'POST', '/v1/topics/orders/messages', { body: 'x', delaySeconds: 1, deliverAt: 1 }, 400, 'InvalidArgument', 'deliverAt'],
  ['send with over-long tag', 'POST', '/v1/topics/orders/messages', { body: 'x', tag: long }, 400, 'InvalidArgument', 'tag'],
  ['send with non-string property', 'POST', '/v1/topics/orders/messages', { body: 'x', properties: { a: 1 } }, 400, 'InvalidArgument', 'properties/a'],
  ['send to a missing topic', 'POST', '/v1/topics/nope/messages', { body: 'x' }, 404, 'TopicNotFound'],
  ['send to FIFO without shard key', 'POST', '/v1/topics/ledger/messages', { body: 'x' }, 400, 'ShardKeyRequired', 'shardKey'],
  ['send an oversize body', 'POST', '/v1/topics/orders/messages', { body: 'x'.repeat(256 * 1024 + 1) }, 413, 'PayloadTooLarge'],
  ['send an oversize request', 'POST', '/v1/topics/orders/messages', { body: 'x'.repeat(1200 * 1024) }, 413, 'PayloadTooLarge'],
  ['batch without entries', 'POST', '/v1/topics/orders/messages/batch', { entries: [] }, 400, 'InvalidArgument', 'entries'],
  ['batch of 101', 'POST', '/v1/topics/orders/messages/batch', { entries: Array.from({ length: 101 }, () => ({ body: 'x' })) }, 400, 'InvalidArgument', 'entries'],
  ['batch with a bad entry', 'POST', '/v1/topics/orders/messages/batch', { entries: [{ body: 'x' }, { body: 1 }] }, 400, 'InvalidArgument', 'entries/1/body'],
  ['receive zero', 'POST', '/v1/groups/billing/receive', { maxMessages: 0 }, 400, 'InvalidArgument', 'maxMessages'],
  ['receive too long a wait', 'POST', '/v1/groups/billing/receive', { waitSeconds: 21 }, 400, 'InvalidArgument', 'waitSeconds'],
  ['receive from an unsubscribed topic', 'POST', '/v1/groups/billing/receive', { topics: ['ledger'] }, 400, 'InvalidArgument', 'topics/0'],
  ['receive for a missing group', 'POST', '/v1/groups/nope/receive', {}, 404, 'GroupNotFound'],
  ['receive carrying a malformed receipt handle', 'POST', '/v1/groups/billing/receive', { commit: ['zzz'] }, 400, 'InvalidArgument', 'commit/0'],
  ['receive asking for a missing doorbell without parking', 'POST', '/v1/groups/billing/receive', { doorbellMissing: true }, 400, 'InvalidArgument', 'doorbellMissing'],
  ['receive carrying too many handles', 'POST', '/v1/groups/billing/receive', { commit: Array.from({ length: 101 }, () => 'h') }, 400, 'InvalidArgument', 'commit'],
  ['visibility with a garbage handle', 'POST', '/v1/groups/billing/visibility', { receiptHandle: 'abc', visibilityTimeoutSeconds: 1 }, 400, 'InvalidArgument', 'receiptHandle'],
  ['visibility negative', 'POST', '/v1/groups/billing/visibility', { receiptHandle: 'abc', visibilityTimeoutSeconds: -1 }, 400, 'InvalidArgument', 'visibilityTimeoutSeconds'],
  ['commit nothing', 'POST', '/v1/groups/billing/commit', { entries: [] }, 400, 'InvalidArgument', 'entries'],
  ['commit a garbage handle', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: 'not-a-handle' }] }, 400, 'InvalidArgument', 'entries/0/receiptHandle'],
  ['commit with unknown field', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: 'x', extra: 1 }] }, 400, 'InvalidArgument'],
  ['unknown message', 'GET', '/v1/topics/orders/messages/mAAAA', undefined, 404, 'MessageNotFound'],
  ['query by key without key', 'GET', '/v1/topics/orders/messages', undefined, 400, 'InvalidArgument', 'query/key'],
  ['cancel an unknown message', 'DELETE', '/v1/topics/orders/messages/d01ARZ3NDEKTSV4RRFFQ69G5FAV', undefined, 404, 'MessageNotFound'],
  // Ids are at most 557 characters (docs/design.md, Message ids); longer than 1024 is refused before any look-up.
  ['cancel with an over-long id', 'DELETE', `/v1/topics/orders/messages/${'m'.repeat(1025)}`, undefined, 400, 'InvalidArgument', 'path/messageId'],
  ['send beyond maxDelaySeconds', 'POST', '/v1/topics/orders/messages', { body: 'x', delaySeconds: 3 * 86_400 + 1 }, 400, 'DelayTooLong', 'delaySeconds'],
  ['send with deliverAt in epoch seconds', 'POST', '/v1/topics/orders/messages', { body: 'x', deliverAt: 1_764_547_200 }, 400, 'InvalidArgument', 'deliverAt'],
  ['batch with deliverAt in epoch seconds', 'POST', '/v1/topics/orders/messages/batch', { entries: [{ body: 'x' }, { body: 'y', deliverAt: 1_764_547_200 }] }, 400, 'InvalidArgument', 'entries/1/deliverAt'],
  ['send with a malformed deliverAt', 'POST', '/v1/topics/orders/messages', { body: 'x', deliverAt: 'tomorrow' }, 400, 'InvalidArgument', 'deliverAt'],
  ['commit publishing to a missing topic', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'nope', body: 'x' }] }] }, 400, 'InvalidArgument', 'entries/0/publish/0/topic'],
  ['commit publishing to FIFO without shard key', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'ledger', body: 'x' }] }] }, 400, 'ShardKeyRequired', 'entries/0/publish/0/shardKey'],
  ['commit publishing with deliverAt in epoch seconds', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'orders', body: 'x' }, { topic: 'orders', body: 'y', deliverAt: 1_764_547_200 }] }] }, 400, 'InvalidArgument', 'entries/0/publish/1/deliverAt'],
  ['commit publishing with delay and deliverAt', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'orders', body: 'x', delaySeconds: 1, deliverAt: Date.now() }] }] }, 400, 'InvalidArgument', 'entries/0/publish/0/deliverAt'],
  ['commit publishing beyond maxDelaySeconds', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'orders', body: 'x', delaySeconds: 3 * 86_400 + 1 }] }] }, 400, 'DelayTooLong', 'entries/0/publish/0/delaySeconds'],
  ['commit publishing a transaction', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'orders', body: 'x', transaction: { producerGroup: 'p' } }] }] }, 400, 'InvalidArgument', 'entries/0/publish/0'],
  ['commit publishing an over-long dedupId', 'POST', '/v1/groups/billing/commit', { entries: [{ receiptHandle: SPENT, publish: [{ topic: 'orders', body: 'x', dedupId: long }] }] }, 400, 'InvalidArgument', 'entries/0/publish/0/dedupId'],
  ['producer without checkerUrl', 'PUT', '/v1/producers/p1', { maxChecks: 3 }, 400, 'InvalidArgument', 'checkerUrl'],
  ['producer with a private checkerUrl', 'PUT', '/v1/producers/p1', { checkerUrl: 'https://10.0.0.1/c' }, 400, 'InvalidArgument', 'checkerUrl'],
  ['producer with checkIntervalSeconds 0', 'PUT', '/v1/producers/p1', { checkerUrl: 'http://127.0.0.1:9/c', checkIntervalSeconds: 0 }, 400, 'InvalidArgument', 'checkIntervalSeconds'],
  ['producer with a bad onMaxChecks', 'PUT', '/v1/producers/p1', { checkerUrl: 'http://127.0.0.1:9/c', onMaxChecks: 'maybe' }, 400, 'InvalidArgument', 'onMaxChecks'],
  ['missing producer', 'GET', '/v1/producers/nope', undefined, 404, 'ProducerGroupNotFound'],
  ['delete a missing producer', 'DELETE', '/v1/producers/nope', undefined, 404, 'ProducerGroupNotFound'],
  ['delete a producer with a bad name', 'DELETE', '/v1/producers/a%24b', undefined, 400, 'InvalidArgument', 'path/producerGroup'],
  ['list producers with limit 0', 'GET', '/v1/producers?limit=0', undefined, 400, 'InvalidArgument', 'query/limit'],
  ['list producers with a topic page token', 'GET', `/v1/producers?nextToken=${Buffer.from(JSON.stringify({ pk: 'TOPIC', sk: 'orders' })).toString('base64url')}`, undefined, 400, 'InvalidArgument', 'nextToken'],
  ['rotate a missing producer', 'POST', '/v1/producers/nope/rotate-secret', undefined, 404, 'ProducerGroupNotFound'],
  ['rotate the secret of a missing group', 'POST', '/v1/groups/nope/rotate-secret', undefined, 404, 'GroupNotFound'],
  ['rotate the secret of a pull group', 'POST', '/v1/groups/billing/rotate-secret', undefined, 400, 'InvalidArgument', 'group'],
  ['push group with a private url', 'PUT', '/v1/groups/p1', { subscriptions: [{ topic: 'orders' }], push: { url: 'https://10.0.0.1/p' } }, 400, 'InvalidArgument', 'push/url'],
  ['push group with batchSize 0', 'PUT', '/v1/groups/p1', { subscriptions: [{ topic: 'orders' }], push: { url: 'http://127.0.0.1:9/p', batchSize: 0 } }, 400, 'InvalidArgument', 'push/batchSize'],
  ['send with an unknown producer group', 'POST', '/v1/topics/orders/messages', { body: 'x', transaction: { producerGroup: 'nope' } }, 404, 'ProducerGroupNotFound'],
  ['send a scheduled transaction', 'POST', '/v1/topics/orders/messages', { body: 'x', delaySeconds: 5, transaction: { producerGroup: 'nope' } }, 400, 'InvalidArgument', 'transaction'],
  ['commit a malformed transaction id', 'POST', '/v1/transactions/abc/commit', undefined, 400, 'InvalidArgument', 'path/transactionId'],
  ['commit an unknown transaction', 'POST', '/v1/transactions/t01ARZ3NDEKTSV4RRFFQ69G5FAV/commit', undefined, 404, 'TransactionNotFound'],
  ['roll back an unknown transaction', 'POST', '/v1/transactions/t01ARZ3NDEKTSV4RRFFQ69G5FAV/rollback', undefined, 404, 'TransactionNotFound'],
  ['get an unknown transaction', 'GET', '/v1/transactions/t01ARZ3NDEKTSV4RRFFQ69G5FAV', undefined, 404, 'TransactionNotFound'],
  ['unknown route', 'GET', '/v1/nothing', undefined, 404, 'NotFound'],
  ['wrong method', 'PATCH', '/v1/topics/orders/messages', undefined, 405, 'MethodNotAllowed'],
  ['patch a topic without a body', 'PATCH', '/v1/topics/orders', undefined, 400, 'InvalidArgument'],
  ['patch a topic’s type', 'PATCH', '/v1/topics/orders', { type: 'fifo' }, 409, 'Conflict'],
  ['patch a topic’s sequenced', 'PATCH', '/v1/topics/ledger', { sequenced: true, retentionSeconds: 600 }, 409, 'Conflict'],
  ['patch a sequenced topic’s sequenced', 'PATCH', '/v1/topics/sequenced', { sequenced: false, retentionSeconds: 600 }, 409, 'Conflict'],
  ['patch a topic with retention 0', 'PATCH', '/v1/topics/orders', { retentionSeconds: 0 }, 400, 'InvalidArgument', 'retentionSeconds'],
  ['patch a missing topic', 'PATCH', '/v1/topics/nope', { retentionSeconds: 600 }, 404, 'TopicNotFound'],
  ['patch a group with an unknown field', 'PATCH', '/v1/groups/billing', { colour: 'red' }, 400, 'InvalidArgument'],
  ['patch a group with a bad delivery mode', 'PATCH', '/v1/groups/billing', { deliveryMode: 'fast' }, 400, 'InvalidArgument', 'deliveryMode'],
  ['patch a group onto a missing topic', 'PATCH', '/v1/groups/billing', { subscriptions: [{ topic: 'nope' }] }, 404, 'TopicNotFound'],
  ['patch a group to subscribe to its own dead-letter topic', 'PATCH', '/v1/groups/billing', { deadLetterTopic: 'orders' }, 400, 'InvalidArgument'],
  ['patch a group’s retry maxSeconds below its stored initialSeconds', 'PATCH', '/v1/groups/billing', { retryPolicy: { maxSeconds: 0 } }, 400, 'InvalidArgument', 'retryPolicy/maxSeconds'],
  ['patch a group’s retry multiplier to 0', 'PATCH', '/v1/groups/billing', { retryPolicy: { multiplier: 0 } }, 400, 'InvalidArgument', 'retryPolicy/multiplier'],
  ['patch a missing group', 'PATCH', '/v1/groups/nope', { maxDeliveries: 2 }, 404, 'GroupNotFound'],
  ['redrive without a body', 'POST', '/v1/groups/billing/redrive', undefined, 400, 'InvalidArgument'],
  ['redrive with maxMessages 0', 'POST', '/v1/groups/billing/redrive', { maxMessages: 0 }, 400, 'InvalidArgument', 'maxMessages'],
  ['redrive with maxMessages 1001', 'POST', '/v1/groups/billing/redrive', { maxMessages: 1001 }, 400, 'InvalidArgument', 'maxMessages'],
  ['redrive with an unknown field', 'POST', '/v1/groups/billing/redrive', { all: true }, 400, 'InvalidArgument'],
  ['redrive a missing group', 'POST', '/v1/groups/nope/redrive', {}, 404, 'GroupNotFound'],
  ['purge a missing topic', 'POST', '/v1/topics/nope/purge', undefined, 404, 'TopicNotFound'],
  ['purge with a bad topic name', 'POST', `/v1/topics/${long}/purge`, undefined, 400, 'InvalidArgument', 'path/topic'],
  ['seek without a body', 'POST', '/v1/groups/billing/seek', undefined, 400, 'InvalidArgument'],
  ['seek to a malformed time', 'POST', '/v1/groups/billing/seek', { to: 'yesterday' }, 400, 'InvalidArgument', 'to'],
  ['seek to a future time', 'POST', '/v1/groups/billing/seek', { to: '2999-01-01T00:00:00Z' }, 400, 'InvalidArgument', 'to'],
  ['seek with an unknown field', 'POST', '/v1/groups/billing/seek', { to: 'latest', all: true }, 400, 'InvalidArgument'],
  ['seek on a topic not subscribed', 'POST', '/v1/groups/billing/seek', { to: 'latest', topics: ['ledger'] }, 400, 'InvalidArgument', 'topics/0'],
  ['seek a missing group', 'POST', '/v1/groups/nope/seek', { to: 'latest' }, 404, 'GroupNotFound'],
  ['seek one topic of a time-order group alone', 'POST', '/v1/groups/ordered/seek', { to: 'earliest', topics: ['og-b'] }, 400, 'InvalidArgument', 'topics/0'],
];

describe('bad input', () => {
  it.each(cases)('%s: %s %s', async (_name, method, path, body, status, code, errorPath) => {
    const before = await snapshot();
    const res = await api.request(method, path, typeof body === 'object' ? JSON.parse(JSON.stringify(body).replaceAll(SPENT, spent)) : body);
    expectProblem(res, status, code, errorPath);
    expect(await snapshot()).toEqual(before);
  });

  it('a receive carrying a live handle but asking for an unsubscribed topic commits nothing', async () => {
    const before = await snapshot();
    const res = await api.request('POST', '/v1/groups/billing/receive', { commit: [receipt], topics: ['ledger'] });
    expectProblem(res, 400, 'InvalidArgument', 'topics/0');
    expect(await snapshot()).toEqual(before);
    expect(before.group).toMatchObject({ inFlight: 1 });
  });

  it('answers a tampered, truncated or foreign message id with 404 and a forged receipt handle with 400 (issue 14: opaque ids)', async () => {
    const sent = await api.post('/v1/topics/ledger/messages', { body: 'x', shardKey: 'customer-4711' });
    expect(sent.status).toBe(201);
    const id: string = sent.body.messageId;
    expect(id).not.toContain('customer');
    const bytes = Buffer.from(id.slice(1), 'base64url');
    bytes[3] = bytes[3]! ^ 0x40;
    const before = await snapshot();
    for (const bad of [`m${bytes.toString('base64url')}`, id.slice(0, -1), `${id}A`, `m${Buffer.from('k:customer-4711|1').toString('base64url')}`]) {
      for (const method of ['GET', 'DELETE']) expectProblem(await api.request(method, `/v1/topics/ledger/messages/${bad}`), 404, 'MessageNotFound');
    }
    // The real id in another topic names nothing there.
    expectProblem(await api.request('GET', `/v1/topics/orders/messages/${id}`), 404, 'MessageNotFound');
    const handle = Buffer.from(receipt, 'base64url');
    handle[5] = handle[5]! ^ 1;
    const forged = handle.toString('base64url');
    expectProblem(await api.post('/v1/groups/billing/commit', { entries: [{ receiptHandle: forged }] }), 400, 'InvalidArgument', 'entries/0/receiptHandle');
    expectProblem(await api.post('/v1/groups/billing/visibility', { receiptHandle: forged, visibilityTimeoutSeconds: 0 }), 400, 'InvalidArgument', 'receiptHandle');
    expectProblem(await api.post('/v1/groups/billing/receive', { commit: [forged], maxMessages: 1 }), 400, 'InvalidArgument', 'commit/0');
    expect(await snapshot()).toEqual(before);
    expect((await api.request('GET', `/v1/topics/ledger/messages/${id}`)).status).toBe(200);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await api.request('POST', '/v1/topics/orders/messages', 'body=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expectProblem(res, 415, 'UnsupportedMediaType');
  });

  it('says a deliverAt number below 10^11 looks like epoch seconds', async () => {
    const res = await api.post('/v1/topics/orders/messages', { body: 'x', deliverAt: Math.floor(Date.now() / 1000) + 60 });
    expectProblem(res, 400, 'InvalidArgument', 'deliverAt');
    expect(res.body.detail).toMatch(/deliverAt .*looks like epoch seconds/);
  });

  it('covers every route', () => {
    const covered = new Set(cases.map(([, method, path]) => `${method} ${path.replace(/\?.*/, '')}`));
    const pattern = (p: string) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`);
    for (const route of routes.filter((r) => r.params || r.query || r.body)) {
      const hit = [...covered].some((c) => c.startsWith(`${route.method} `) && pattern(route.path).test(c.slice(route.method.length + 1)));
      expect(hit, `${route.method} ${route.path}`).toBe(true);
    }
  });
});

describe('authentication', () => {
  const anonymous = () => client(runtime.url, null);
  const wrong = () => client(runtime.url, 'wrong-token');
  it.each(routes.filter((r) => r.auth).map((r) => [r.method, r.path] as const))('%s %s needs the token', async (method, path) => {
    const concrete = path.replace(/\{\w+\}/g, 'does-not-exist');
    for (const c of [anonymous(), wrong()]) {
      const res = await c.request(method, concrete, method === 'GET' || method === 'DELETE' ? undefined : '{not json');
      expectProblem(res, 401, 'Unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });
  it('answers /health without a token', async () => {
    expect((await anonymous().get('/health')).status).toBe(200);
  });
  it('rejects unknown routes with 401 before 404 when unauthenticated', async () => {
    expectProblem(await anonymous().get('/v1/nothing'), 401, 'Unauthorized');
  });
  it.each(routes.filter((r) => r.auth && r.body).map((r) => [r.method, r.path] as const))(
    '%s %s answers 401 before any body check (oversize, wrong media type, __proto__, bad path)',
    async (method, path) => {
      const concrete = path.replace(/\{\w+\}/g, 'does-not-exist');
      for (const c of [anonymous(), wrong()]) {
        expectProblem(await c.request(method, concrete, { body: 'x'.repeat(1200 * 1024) }), 401, 'Unauthorized');
        expectProblem(await c.request(method, concrete, 'body=x', { 'content-type': 'application/x-www-form-urlencoded' }), 401, 'Unauthorized');
        expectProblem(await c.request(method, concrete, '{"__proto__":{"a":1},"deliverAt":5}'), 401, 'Unauthorized');
        expectProblem(await c.request(method, path.replace(/\{\w+\}/g, '%ZZ'), '{}'), 401, 'Unauthorized');
      }
    },
  );
  it('answers 401 before 405 and before a malformed query', async () => {
    expectProblem(await anonymous().request('PATCH', '/v1/topics/orders', '{}'), 401, 'Unauthorized');
    expectProblem(await wrong().get('/v1/topics?limit=zero&colour=red'), 401, 'Unauthorized');
    expectProblem(await wrong().get('/v1/topics?__proto__=x'), 401, 'Unauthorized');
  });
});

async function snapshot() {
  const topics = await api.get('/v1/topics');
  const group = await api.get('/v1/groups/billing');
  const groups = await api.get('/v1/groups');
  return { topics: topics.body, group: { ...group.body, oldestMessageAgeSeconds: 0 }, groups: groups.body, receipt: receipt.length };
}
