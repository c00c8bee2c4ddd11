/**
 * A FIFO pipeline: payment events per account (shard key = account) are
 * enriched by a consumer group in `protected` mode and published to a second
 * FIFO topic atomically with each commit (consume-transform-produce). An
 * auditor reads the second topic and checks that every account's entries
 * arrived complete and in order.
 *
 *   payments (fifo) ──▶ group "enricher" (protected, Consumer × 8) ──commit+publish──▶ ledger (fifo) ──▶ group "auditor"
 *
 * Run against `npm start` (see README.md beside this file):
 *   npx tsx examples/fifo-pipeline/pipeline.ts
 */
import { randomUUID } from 'node:crypto';
import { Consumer, SluiceClient } from 'sluice';

const env = process.env;
const ACCOUNTS = Number(env.ACCOUNTS ?? 5);
const PER_ACCOUNT = Number(env.PER_ACCOUNT ?? 20);
const client = new SluiceClient({ endpoint: env.SLUICE_ENDPOINT ?? 'http://127.0.0.1:3000', token: env.SLUICE_API_TOKEN });

interface Payment {
  run: string;
  account: string;
  n: number;
  amount: number;
}
interface LedgerEntry extends Payment {
  balance: number;
}

await client.putTopic('payments', { type: 'fifo' });
await client.putTopic('ledger', { type: 'fifo' });
await client.putGroup('enricher', { subscriptions: [{ topic: 'payments' }], deliveryMode: 'protected', visibilityTimeoutSeconds: 30 });
await client.putGroup('auditor', { subscriptions: [{ topic: 'ledger' }], deliveryMode: 'serialized' });

// Produce: each account's payments in order, batched across accounts.
const run = randomUUID().slice(0, 8);
for (let n = 1; n <= PER_ACCOUNT; n++) {
  const entries = Array.from({ length: ACCOUNTS }, (_, a) => {
    const payment: Payment = { run, account: `acct-${a}`, n, amount: Math.round(Math.random() * 200 - 100) };
    return { body: JSON.stringify(payment), shardKey: payment.account };
  });
  await client.sendBatch('payments', entries);
}
console.log(`run ${run}: sent ${ACCOUNTS * PER_ACCOUNT} payments for ${ACCOUNTS} accounts`);

// Enrich: a running balance per account. The Consumer runs accounts in parallel and each account in order,
// so the balance is computed in sequence; the ledger entry is published atomically with the commit.
const balances = new Map<string, number>();
const enricher = new Consumer(client, {
  group: 'enricher',
  concurrency: 8,
  // Short long-polls: this demo stops when it is done, and stop() lets a pending receive answer first.
  waitSeconds: 2,
  handler: async (message) => {
    const payment = JSON.parse(message.body) as Payment;
    const balance = (balances.get(payment.account) ?? 0) + payment.amount;
    balances.set(payment.account, balance);
    const entry: LedgerEntry = { ...payment, balance };
    return { publish: [{ topic: 'ledger', body: JSON.stringify(entry), shardKey: payment.account }] };
  },
});

// Audit: every account's entries of this run, complete and in order.
const seen = new Map<string, number>();
const problems: string[] = [];
let audited = 0;
let finish: () => void = () => undefined;
const finished = new Promise<void>((resolve) => (finish = resolve));
const auditor = new Consumer(client, {
  group: 'auditor',
  concurrency: 4,
  waitSeconds: 2,
  handler: async (message) => {
    const entry = JSON.parse(message.body) as LedgerEntry;
    if (entry.run !== run) return; // left over from an earlier run
    const last = seen.get(entry.account) ?? 0;
    if (entry.n !== last + 1) problems.push(`${entry.account}: entry ${entry.n} after ${last}`);
    seen.set(entry.account, entry.n);
    if (++audited === ACCOUNTS * PER_ACCOUNT) finish();
  },
});

const started = Date.now();
await Promise.all([enricher.start(), auditor.start()]);
await finished;
await Promise.all([enricher.stop(), auditor.stop()]);
console.log(`audited ${audited} ledger entries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
for (const [account, balance] of balances) console.log(`  ${account}: balance ${balance}`);
if (problems.length > 0) {
  console.error(`order problems:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('every account complete and in order');
