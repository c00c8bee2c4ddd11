/** redrive of a push group's dead letters through the local runtime (found by an audit, 2026-12-04). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocal, type LocalRuntime } from '../../local/runtime.js';
import { client, REMOTE, TOKEN } from '../helpers/local.js';
import { tableName } from '../helpers/stores.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';

let runtime: LocalRuntime;
let endpoint: PushEndpoint;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  runtime = await startLocal({ host: '127.0.0.1', port: 0, token: TOKEN, tableName: tableName('e2e-push'), endpoint: dynamoEndpoint(), dataDir: undefined, dispatchPollIntervalMs: 20 });
  endpoint = await pushEndpoint();
});
afterAll(async () => {
  await endpoint?.close();
  await runtime?.stop();
});

describe.skipIf(REMOTE)('redrive of a push group', () => {
  for (const deleteTopic of [false, true]) {
    it(`pushes the redriven message${deleteTopic ? ' after its topic was deleted' : ''}`, async () => {
      const api = client(runtime.url);
      const t = deleteTopic ? 'gone' : 'kept';
      expect((await api.put(`/v1/topics/${t}`, { type: 'standard' })).status).toBe(200);
      expect((await api.put(`/v1/topics/${t}-other`, { type: 'standard' })).status).toBe(200);
      expect((await api.put(`/v1/groups/${t}-hooks`, { subscriptions: [{ topic: t }, { topic: `${t}-other` }], push: { url: endpoint.url }, maxDeliveries: 1 })).status).toBe(200);
      endpoint.answer = () => ({ status: 500 });
      const before = endpoint.requests.length;
      expect((await api.post(`/v1/topics/${t}/messages`, { body: `${t}-poison` })).status).toBe(201);
      await endpoint.waitFor(before + 1, 5000);
      let g = await api.get(`/v1/groups/${t}-hooks`);
      for (let i = 0; i < 100 && g.body.deadLettered < 1; i++) {
        await sleep(100);
        g = await api.get(`/v1/groups/${t}-hooks`);
      }
      expect(g.body.deadLettered).toBe(1);
      endpoint.answer = () => ({ status: 204 });
      if (deleteTopic) {
        expect((await api.put(`/v1/groups/${t}-hooks`, { subscriptions: [{ topic: `${t}-other` }], push: { url: endpoint.url }, maxDeliveries: 1 })).status).toBe(200);
        expect((await api.del(`/v1/topics/${t}`)).status).toBe(204);
      }
      const redrive = await api.post(`/v1/groups/${t}-hooks/redrive`, {});
      expect(redrive.body).toMatchObject({ redriven: 1 });
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !endpoint.requests.slice(before + 1).some((r) => r.messages.some((m) => m.body === `${t}-poison`))) await sleep(100);
      expect(endpoint.requests.slice(before + 1).map((r) => r.messages.map((m) => m.body)).flat()).toContain(`${t}-poison`);
    });
  }
});
