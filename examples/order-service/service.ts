/**
 * An order service with a transactional outbox on Sluice.
 *
 *   POST /orders {"item": "book", "quantity": 2}
 *     1. sends the `order.created` event as a half message (invisible to consumers),
 *     2. inserts the order in its own database (the local transaction),
 *     3. commits the half message — or rolls it back if the insert failed.
 *   If the service dies between 2 and 3, Sluice calls back
 *   POST /sluice/check (signed, Standard Webhooks) and the service answers
 *   from its database: the order exists → commit, otherwise → rollback.
 *
 *   POST /orders?crash=after-insert simulates that death: the order is stored
 *   but the commit is never sent, so only the check-back can release the event.
 *
 * Run against `npm start` (see README.md beside this file):
 *   npx tsx examples/order-service/service.ts
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname, resolve } from 'node:path';
import { SluiceApiError, SluiceClient, TransactionProducer, createCheckerHandler } from 'sluice';
import { OrdersDb } from './orders-db.js';

const env = process.env;
const PORT = Number(env.PORT ?? 4000);
const TOPIC = env.ORDERS_TOPIC ?? 'orders';
const PRODUCER_GROUP = env.PRODUCER_GROUP ?? 'order-service';
const DATA_DIR = resolve(env.ORDER_SERVICE_DATA ?? '.data/order-service');
const CHECKER_URL = `http://127.0.0.1:${PORT}/sluice/check`;

const client = new SluiceClient({ endpoint: env.SLUICE_ENDPOINT ?? 'http://127.0.0.1:3000', token: env.SLUICE_API_TOKEN });
const db = new OrdersDb(`${DATA_DIR}/orders.json`);
const producer = new TransactionProducer(client, { producerGroup: PRODUCER_GROUP, checkAfterSeconds: 10 });

/**
 * The producer group and its signing secret. Sluice shows the secret only
 * when the group is created (or the secret rotated), so keep it.
 */
async function signingSecret(): Promise<string> {
  const file = `${DATA_DIR}/signing-secret`;
  const producerGroup = await client.putProducer(PRODUCER_GROUP, { checkerUrl: CHECKER_URL, checkIntervalSeconds: 10, maxChecks: 10 });
  let secret = producerGroup.signingSecret ?? (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!secret) secret = (await client.rotateProducerSecret(PRODUCER_GROUP)).signingSecret ?? '';
  if (!secret) throw new Error(`Sluice returned no signing secret for producer group ${PRODUCER_GROUP}.`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

const readJson = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
};

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function createOrder(req: IncomingMessage, res: ServerResponse, url: URL) {
  const input = (await readJson(req).catch(() => undefined)) as { item?: unknown; quantity?: unknown } | undefined;
  if (!input || typeof input.item !== 'string' || !Number.isInteger(input.quantity)) {
    return reply(res, 400, { error: 'Send {"item": string, "quantity": integer}.' });
  }
  const crash = url.searchParams.get('crash') === 'after-insert';
  const orderId = `order-${randomUUID().slice(0, 8)}`;
  const event = { type: 'order.created', orderId, item: input.item, quantity: input.quantity };
  const outcome = await producer.send(TOPIC, { body: JSON.stringify(event), tag: 'created', keys: [orderId] }, async (half) => {
    await db.insert({
      orderId,
      item: event.item,
      quantity: event.quantity as number,
      transactionId: half.transactionId,
      messageId: half.messageId,
      createdAt: new Date().toISOString(),
    });
    // 'unknown' leaves the half message unresolved, as a crash here would: the checker decides.
    return crash ? 'unknown' : 'commit';
  });
  reply(res, 201, { orderId, messageId: outcome.messageId, transactionId: outcome.transactionId, event: outcome.state });
}

async function main() {
  await client.putTopic(TOPIC, { type: 'standard' });
  const checker = createCheckerHandler({
    secret: await signingSecret(),
    check: async (check) => {
      const order = await db.byTransaction(check.transactionId);
      console.log(`check #${check.checkCount} for ${check.transactionId}: ${order ? 'order exists → commit' : 'no order → rollback'}`);
      return order ? 'commit' : 'rollback';
    },
    onError: (error) => console.warn('checker refused a request:', error instanceof Error ? error.message : error),
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = `${req.method} ${url.pathname}`;
    const work =
      route === 'POST /sluice/check'
        ? Promise.resolve(checker.requestListener(req, res))
        : route === 'POST /orders'
          ? createOrder(req, res, url)
          : route === 'GET /orders'
            ? db.all().then((orders) => reply(res, 200, { orders }))
            : Promise.resolve(reply(res, 404, { error: `No route ${route}.` }));
    work.catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) reply(res, error instanceof SluiceApiError ? 502 : 500, { error: error instanceof Error ? error.message : 'failed' });
    });
  });
  server.listen(PORT, '127.0.0.1', () => {
    console.log(`Order service on http://127.0.0.1:${PORT} (Sluice at ${client.endpoint}; checker ${CHECKER_URL}).`);
  });
}

await main();
