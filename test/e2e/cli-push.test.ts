/**
 * `sluice groups put|patch --push-*`, `--pull` and `rotate-secret` against the local runtime, with a
 * real endpoint serving the SDK's createPushHandler: the secret the CLI prints once is the one
 * that verifies the pushes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushHandler, type PushHandler } from '../../lib/client/index.js';
import { cliSession } from '../helpers/cli-session.js';
import { REMOTE } from '../helpers/local.js';

const cli = cliSession();
const { sluice, ok, json } = cli;

let server: Server;
let url: string;
let handler: PushHandler | undefined;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (handler) return handler.requestListener(req, res);
    req.resume();
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

async function until(what: string, condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(REMOTE)('sluice groups with push settings', () => {
  it('creates a push group and prints its secret once; the pushes verify with it', async () => {
    expect(ok(await sluice('topics', 'put', 'clip-orders', '--type', 'standard'))).toBe('Topic clip-orders (standard) is ready.\n');
    const text = ok(await sluice('groups', 'create', 'clip-hooks', '--subscribe', 'clip-orders', '--push-url', url, '--push-batch-size', '5', '--push-timeout', '3'));
    const lines = text.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual(['Group clip-hooks (serialized) subscribes to clip-orders.', `Pushes to ${url} (batch 5, timeout 3s, concurrency 10).`]);
    const secret = /^Signing secret \(shown only now; give it to createPushHandler\): (whsec_\S+)$/.exec(lines[2] ?? '')?.[1];
    expect(secret).toBeDefined();
    expect(lines).toHaveLength(3);

    handler = createPushHandler({ secret: secret!, handler: (messages) => void received.push(...messages.map((m) => String(m.body))) });
    ok(await sluice('send', 'clip-orders', 'hello push'));
    await until('the push', () => received.length > 0);
    expect(received).toEqual(['hello push']);

    // Shown once: neither get nor a later put answers it.
    const detail = await json('groups', 'get', 'clip-hooks');
    expect(detail.signingSecret).toBeUndefined();
    expect(detail.push).toMatchObject({ url, batchSize: 5, timeoutSeconds: 3, maxConcurrency: 10 });
    const again = ok(await sluice('groups', 'put', 'clip-hooks', '--subscribe', 'clip-orders', '--push-url', url));
    expect(again).not.toContain('whsec_');
  });

  it('patch changes only the push fields given; rotate-secret prints a new secret; --pull removes push', async () => {
    expect((await json('groups', 'patch', 'clip-hooks', '--push-max-concurrency', '2')).push).toMatchObject({ url, batchSize: 1, timeoutSeconds: 10, maxConcurrency: 2 });
    expect((await json('groups', 'update', 'clip-hooks', '--push-batch-size', '7')).push).toMatchObject({ url, batchSize: 7, maxConcurrency: 2 });

    const rotated = ok(await sluice('groups', 'rotate-secret', 'clip-hooks')).trimEnd().split('\n');
    expect(rotated[0]).toBe('New signing secret for push group clip-hooks (shown only now; the previous one also signs until 24 h from now):');
    expect(rotated[1]).toMatch(/^whsec_/);
    handler = createPushHandler({ secret: rotated[1]!, handler: (messages) => void received.push(...messages.map((m) => String(m.body))) });
    ok(await sluice('send', 'clip-orders', 'after rotation'));
    await until('the push after rotation', () => received.includes('after rotation'));

    const refused = await sluice('groups', 'patch', 'clip-hooks', '--push-url', 'https://192.168.1.10/hook');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('push/url');

    const pulled = await json('groups', 'patch', 'clip-hooks', '--pull');
    expect(pulled.push).toBeNull();
    ok(await sluice('send', 'clip-orders', 'pulled'));
    const receive = await json('receive', 'clip-hooks', '--wait', '5');
    expect(JSON.stringify(receive)).toContain('pulled');

    // A group that never had push settings has no secret to rotate (one that had keeps its secret after --pull).
    ok(await sluice('groups', 'put', 'clip-readers', '--subscribe', 'clip-orders'));
    const notPush = await sluice('groups', 'rotate-secret', 'clip-readers');
    expect(notPush.code).toBe(1);
    expect(notPush.stderr).toContain('not a push group');
  });
});
