/**
 * A send wakes a parked SDK Consumer on the local runtime (docs/design.md, "Waking SDK
 * consumers"): the Consumer's receive parks (`wb` on the topic item), its long poll waits on the
 * group's in-process doorbell, the dispatcher (DynamoDB Local's real stream → DoorbellRoute)
 * rings it, and the handler gets the message. Condition-based waits only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { container } from '../../functions/commons/container.js';
import { Consumer, SluiceClient } from '../../lib/client/index.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let client: SluiceClient;

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
});
afterAll(async () => runtime?.stop());

describe('SDK Consumer on the local runtime', () => {
  it('parks on its group\'s doorbell and is woken by a send through the dispatcher', async () => {
    await client.putTopic('bell-in', { type: 'standard' });
    await client.putGroup('bell-g', { subscriptions: [{ topic: 'bell-in' }] });
    const { stores, localDoorbell } = container();
    expect(localDoorbell).toBeDefined();
    const handled: string[] = [];
    const consumer = new Consumer(client, { group: 'bell-g', waitSeconds: 20, handler: (m) => void handled.push(m.body) });
    await consumer.start();
    try {
      // Parked: the topic item names the group until 10 minutes from the park.
      const parkedUntil = async () => (await stores.catalog.getTopic('bell-in'))?.doorbellGroups?.['bell-g'] ?? 0;
      await until(async () => (await parkedUntil()) > Date.now(), 'the park');
      const rungBefore = localDoorbell?.rings.get('bell-g') ?? 0;
      await client.send('bell-in', { body: 'ding' });
      await until(() => handled.includes('ding'), 'the handler');
      expect(handled).toEqual(['ding']);
      // The dispatcher rang the group's doorbell for the send (it may also have rung for nothing else: one topic, one send).
      await until(() => (localDoorbell?.rings.get('bell-g') ?? 0) > rungBefore, 'the ring');
    } finally {
      await consumer.stop({ abort: true });
    }
  });
});
