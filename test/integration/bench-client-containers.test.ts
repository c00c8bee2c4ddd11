/**
 * The scale rows' client containers (bench/client-containers.ts) on DynamoDB Local: each client
 * is served by a container of its own, built on its first request, whose DynamoDB calls the bench's
 * meter counts under the request's tag and route; the API's own handlers answer (local/gateway.ts,
 * each run in its client's container: a receipt handle from one container commits in another, as
 * across Lambda containers), and bad requests answer the route's 4xx, never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientContainers, CLIENT_HEADER, type ClientContainers } from '../../bench/client-containers.js';
import { Meter, diff } from '../../bench/meter.js';
import { RoundTrip } from '../../bench/round-trip.js';
import { PRODUCER_CLIENTS, dynamoTotals, httpTotals } from '../../bench/workloads.js';
import { buildContainer } from '../../functions/commons/container.js';
import { loadConfig } from '../../functions/commons/config.js';
import { group, topic } from '../helpers/builders.js';
import { benchTableEnv } from '../helpers/bench-env.js';

const TOKEN = 'client-containers-token';

describe('bench client containers', () => {
  let clients: ClientContainers;
  const meter = new Meter();
  const roundTrip = new RoundTrip(5, 10);
  let restore = () => {};

  beforeAll(async () => {
    ({ restore } = await benchTableEnv('clients'));
    const setup = buildContainer(loadConfig(process.env));
    await setup.admin.putTopic('cc-fifo', topic({ type: 'fifo' }));
    await setup.admin.putGroup('cc-g', group('cc-fifo', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    setup.dynamo.destroy();
    clients = await startClientContainers({ token: TOKEN, meter, roundTrip, routeOf: (method, path) => `${method} ${path.split('/')[3] ?? ''}` });
  });

  afterAll(async () => {
    await clients?.stop();
    restore();
  });

  it('serves each client with a container of its own, counted under the request’s tag', async () => {
    const before = meter.snapshot();
    const batch = await clients.api(256).request<{ results: Array<{ messageId?: string; error?: unknown }> }>(
      'POST',
      '/v1/topics/cc-fifo/messages/batch',
      { entries: Array.from({ length: 3 }, (_, i) => ({ body: `m${i}`, shardKey: 'hot' })) },
      'cc-send',
    );
    expect(batch.status).toBe(200);
    expect(batch.body.results.every((r) => typeof r.messageId === 'string')).toBe(true);
    const one = await clients.api(257).request<{ messageId: string }>('POST', '/v1/topics/cc-fifo/messages', { body: 'm3', shardKey: 'hot' }, 'cc-send');
    expect(one.status).toBe(201);
    expect(clients.built()).toBe(2);
    expect(clients.containerOf(256)).toBeDefined();
    expect(clients.containerOf(256)).not.toBe(clients.containerOf(257));
    expect(clients.containerOf(256)?.dynamo).not.toBe(clients.containerOf(257)?.dynamo);

    const window = diff(meter.snapshot(), before);
    expect(httpTotals(window, (t) => t === 'cc-send').requests).toBe(2);
    // Both containers' appends were counted: a segment put at least for each send.
    expect(dynamoTotals(window, (t) => t === 'cc-send').requests).toBeGreaterThanOrEqual(2);
    expect(dynamoTotals(window, (t) => t === 'background' || t === 'untagged').requests).toBe(0);
  });

  it('receives in one container and commits the handles in another', async () => {
    const got = await clients.api(0).request<{ messages: Array<{ receiptHandle: string; body: string }> }>('POST', '/v1/groups/cc-g/receive', { maxMessages: 10, waitSeconds: 0 }, 'cc-rx');
    expect(got.status).toBe(200);
    expect(got.body.messages.map((m) => m.body)).toEqual(['m0', 'm1', 'm2', 'm3']);
    const handles = got.body.messages.map((m) => m.receiptHandle);
    const carried = await clients.api(1).request<{ messages: unknown[]; commitResults: Array<{ status: string }> }>(
      'POST',
      '/v1/groups/cc-g/receive',
      { maxMessages: 10, waitSeconds: 0, commit: handles.slice(0, 2) },
      'cc-rx',
    );
    expect(carried.status).toBe(200);
    expect(carried.body.commitResults.map((r) => r.status)).toEqual(['committed', 'committed']);
    const committed = await clients
      .api(2)
      .request<{ results: Array<{ status: string }> }>('POST', '/v1/groups/cc-g/commit', { entries: handles.slice(2).map((receiptHandle) => ({ receiptHandle })) }, 'cc-rx');
    expect(committed.status).toBe(200);
    expect(committed.body.results.map((r) => r.status)).toEqual(['committed', 'committed']);
    expect(clients.built()).toBe(5);
  });

  it('answers bad requests with the route’s 4xx and builds no container for them', async () => {
    const built = clients.built();
    const url = clients.api(0).base;
    const post = (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect((await post('/v1/topics/cc-fifo/messages', { body: 'x' }, { [CLIENT_HEADER]: '0' })).status).toBe(401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post('/v1/topics/cc-fifo/messages', { body: 'x' }, { ...auth, [CLIENT_HEADER]: '-1' })).status).toBe(400);
    expect((await post('/v1/topics/cc-fifo/messages', { body: 'x' }, auth)).status).toBe(400);
    expect(clients.built()).toBe(built);
    // Every client a scale row can have (256 consumers, 256 producers) has a container; one more is a bench bug.
    expect(() => clients.api(PRODUCER_CLIENTS + 255)).not.toThrow();
    expect(() => clients.api(PRODUCER_CLIENTS + 256)).toThrow(/outside/);

    const missing = await clients.api(0).request<{ status: number; code: string }>('POST', '/v1/topics/nowhere/messages', { body: 'x' }, 'cc-bad');
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'TopicNotFound' });
    const invalid = await clients.api(0).request('POST', '/v1/groups/cc-g/receive', { maxMessages: 0 }, 'cc-bad');
    expect(invalid.status).toBe(400);
    const unrouted = await clients.api(0).request<{ code: string }>('POST', '/v1/groups/cc-g/nowhere', {}, 'cc-bad');
    expect({ status: unrouted.status, code: unrouted.body.code }).toEqual({ status: 404, code: 'NotFound' });
  });

  it('serves every route with the API’s own handler in the client’s container (a request runs in no other)', async () => {
    const before = clients.built();
    const read = await clients.api(3).request<{ name: string; deliveryMode: string }>('GET', '/v1/groups/cc-g', undefined, 'cc-admin');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ name: 'cc-g', deliveryMode: 'concurrent' });
    expect(clients.built()).toBe(before + 1);
    // The handler's DynamoDB calls go through client 3's own client, and no other container's.
    const calls = new Map<number, number>();
    for (const client of [0, 3]) {
      clients.containerOf(client)?.dynamo.middlewareStack.add(
        (next) => async (args) => {
          calls.set(client, (calls.get(client) ?? 0) + 1);
          return next(args);
        },
        { step: 'initialize', name: `count-${client}` },
      );
    }
    expect((await clients.api(3).request('GET', '/v1/groups/cc-g', undefined, 'cc-admin')).status).toBe(200);
    expect(calls.get(3) ?? 0).toBeGreaterThan(0);
    expect(calls.get(0) ?? 0).toBe(0);
  });
});
