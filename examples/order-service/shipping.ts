/**
 * A downstream consumer of the order events: the `shipping` consumer group.
 * It sees an order only once its half message was committed — never one
 * whose local transaction failed.
 *
 *   npx tsx examples/order-service/shipping.ts
 */
import { Consumer, SluiceClient } from 'sluice';

const env = process.env;
const TOPIC = env.ORDERS_TOPIC ?? 'orders';
const client = new SluiceClient({ endpoint: env.SLUICE_ENDPOINT ?? 'http://127.0.0.1:3000', token: env.SLUICE_API_TOKEN });

await client.putTopic(TOPIC, { type: 'standard' });
await client.putGroup('shipping', { subscriptions: [{ topic: TOPIC, tags: ['created'] }] });

const consumer = new Consumer(client, {
  group: 'shipping',
  concurrency: 4,
  handler: async (message) => {
    const event = JSON.parse(message.body) as { orderId: string; item: string; quantity: number };
    console.log(`ship ${event.quantity} × ${event.item} for ${event.orderId} (delivery ${message.deliveryCount})`);
  },
});
await consumer.start();
console.log(`Shipping consumes ${TOPIC}; Ctrl-C stops after the running handlers finish.`);
process.once('SIGINT', () => {
  console.log('stopping…');
  void consumer.stop().then(() => process.exit(0));
});
