/** a poison message at the head of a FIFO shard and the SDK Consumer (found by an audit, 2026-12-04). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { Consumer, SluiceClient } from '../../lib/client/index.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let client: SluiceClient;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
});
afterAll(async () => runtime?.stop());

describe('Consumer on a FIFO shard with a poison head', () => {
  for (const deliveryMode of ['protected', 'concurrent'] as const) {
    it(`${deliveryMode}: only the poison message is dead-lettered; the messages behind it reach the handler`, async () => {
      const t = `p-${deliveryMode}`;
      await client.putTopic(t, { type: 'fifo' });
      await client.putGroup(`${t}-g`, {
        subscriptions: [{ topic: t }],
        deliveryMode,
        maxDeliveries: 2,
        retryPolicy: { initialSeconds: 0, multiplier: 1, maxSeconds: 0 },
      });
      await client.sendBatch(t, ['poison', 'm2', 'm3'].map((body) => ({ body, shardKey: 'A' })));
      const handled: string[] = [];
      const consumer = new Consumer(client, {
        group: `${t}-g`,
        concurrency: 1,
        waitSeconds: 1,
        handler: async (m) => {
          handled.push(`${m.body}#${m.deliveryCount}`);
          if (m.body === 'poison') throw new Error('poison');
        },
        onError: () => undefined,
      });
      await consumer.start();
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !(handled.includes('m2#1') || handled.some((h) => h.startsWith('m3'))) && (await client.getGroup(`${t}-g`)).deadLettered < 3) await sleep(200);
      await sleep(1_000);
      await consumer.stop();
      const stats = await client.getGroup(`${t}-g`);
      // The poison message twice (maxDeliveries 2) and dead-lettered; m2 and m3 each reach the handler and commit.
      expect({ neverHandled: ['m2', 'm3'].filter((b) => !handled.some((h) => h.startsWith(`${b}#`))), deadLettered: stats.deadLettered, committed: stats.committed }).toEqual({
        neverHandled: [],
        deadLettered: 1,
        committed: 2,
      });
    });
  }
});
