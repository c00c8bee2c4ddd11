/**
 * A push group across a SIGKILL of the local runtime (issue 15): the killed process leaves leases
 * (a request it was waiting on) and released messages whose retry job was in its in-process push
 * bus. The next start pushes them without any new send: it enqueues a job per push group now,
 * after the longest lease, and after the longest retry back-off (local/runtime.ts startPush).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { client, TOKEN } from '../helpers/local.js';
import { spawnRuntime, type RuntimeProcess } from '../helpers/process.js';
import { pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';
import { tableName } from '../helpers/stores.js';

let endpoint: PushEndpoint;
let proc: RuntimeProcess | undefined;

beforeAll(async () => {
  endpoint = await pushEndpoint();
});
afterAll(async () => {
  await proc?.kill('SIGKILL');
  await endpoint?.close();
});

describe('push groups across a restart of the local runtime', () => {
  it('pushes what the killed process held or was to retry, with no new send, in shard order', async () => {
    const dynamo = dynamoEndpoint();
    const table = tableName('push-restart');
    // The key that seals the push secret must survive the restart (as .data/secrets.key does).
    const env = { SLUICE_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') };
    proc = await spawnRuntime({ endpoint: dynamo, table, token: TOKEN, env });
    let api = client(proc.url);
    expect((await api.put('/v1/topics/plain', { type: 'standard' })).status).toBe(200);
    expect((await api.put('/v1/topics/ledger', { type: 'fifo' })).status).toBe(200);
    const created = await api.put('/v1/groups/hooks', {
      subscriptions: [{ topic: 'plain' }, { topic: 'ledger' }],
      retryPolicy: { initialSeconds: 1, multiplier: 1, maxSeconds: 1 },
      push: { url: endpoint.url, batchSize: 2, timeoutSeconds: 1, maxConcurrency: 2 },
    });
    expect(created.status).toBe(200);
    const webhook = new Webhook(created.body.signingSecret as string);

    // Before the kill: the first request never answers (its lease outlives the process), the rest fail (released, retry job in the bus).
    endpoint.answer = (request) => (endpoint.requests.indexOf(request) === 0 ? 'hang' : { status: 500 });
    const sent = new Map<string, string>(); // messageId → body
    for (let i = 0; i < 4; i++) {
      const res = await api.post('/v1/topics/plain/messages', { body: `p${i}` });
      expect(res.status).toBe(201);
      sent.set(res.body.messageId, `p${i}`);
    }
    for (let i = 0; i < 6; i++) {
      const res = await api.post('/v1/topics/ledger/messages', { body: `l${i}`, shardKey: `s${i % 2}` });
      expect(res.status).toBe(201);
      sent.set(res.body.messageId, `l${i}`);
    }
    await endpoint.waitFor(3, 20_000);
    await proc.kill('SIGKILL');
    const before = endpoint.requests.length;

    endpoint.answer = () => ({ status: 204 });
    proc = await spawnRuntime({ endpoint: dynamo, table, token: TOKEN, env });
    api = client(proc.url);
    let detail = await api.get('/v1/groups/hooks');
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && !(detail.body.committed === sent.size && detail.body.inFlight === 0 && detail.body.backlog === 0)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      detail = await api.get('/v1/groups/hooks');
    }
    expect(detail.body).toMatchObject({ committed: sent.size, inFlight: 0, backlog: 0, deadLettered: 0 });

    const after = endpoint.requests.slice(before);
    expect(after.length).toBeGreaterThan(0);
    // Every message pushed (at least once), and the ones after the restart answered 204.
    const pushed = new Set(endpoint.requests.flatMap((r) => r.messages.map((m) => m.messageId)));
    expect([...sent.keys()].filter((id) => !pushed.has(id))).toEqual([]);
    for (const request of endpoint.requests) expect(() => webhook.verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    // FIFO: per shard, first pushes in sequence order.
    const seen = new Set<string>();
    const lastFirst = new Map<string, number>();
    const broken: string[] = [];
    for (const m of endpoint.requests.flatMap((r) => r.messages)) {
      if (m.shardKey === null || m.sequence === null || seen.has(m.messageId)) continue;
      seen.add(m.messageId);
      if ((lastFirst.get(m.shardKey) ?? -Infinity) >= m.sequence) broken.push(`${m.shardKey}: #${m.sequence} first pushed after #${lastFirst.get(m.shardKey)}`);
      lastFirst.set(m.shardKey, m.sequence);
    }
    expect(broken).toEqual([]);
    console.log(`push across a restart: ${before} requests before the kill, ${after.length} after; ${sent.size} messages committed`);
  }, 120_000);
});
