/**
 * The SQS stand-in of the `sdk-consumer` idle and wake rows (docs/design.md, "Waking SDK
 * consumers"): there is no SQS locally, so a plain HTTP server speaks the part of SQS's JSON
 * protocol a doorbell uses (ReceiveMessage held up to WaitTimeSeconds, DeleteMessageBatch) and
 * counts the requests, which are priced as SQS requests. The AWS-mode receiver creates the
 * groups' queues here (`doorbellQueues`); the local runtime's dispatcher rings its in-process
 * doorbell (the same DoorbellRoute), and `forwardRings` passes each ring on as the SQS
 * SendMessage the AWS dispatcher makes — one request, counted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { doorbellQueueName } from '../lib/adapters/aws/names.js';
import type { InProcessDoorbell } from '../lib/adapters/local/in-process-doorbell.js';
import type { DoorbellQueues } from '../lib/ports/doorbell.js';

export interface BenchSqs {
  url: string;
  /** The AWS-mode receiver's doorbell queues: created here (CreateQueue counted). */
  doorbellQueues: DoorbellQueues;
  /** Requests by action: CreateQueue, SendMessage, ReceiveMessage, DeleteMessageBatch. */
  requests(): Record<string, number>;
  /** Passes the in-process rings of `group` on to its queue until the returned stop is called. */
  forwardRings(doorbell: InProcessDoorbell, group: string): () => void;
  stop(): Promise<void>;
}

export async function startBenchSqs(): Promise<BenchSqs> {
  const counts: Record<string, number> = {};
  const rings = new Map<string, number>();
  const waiting = new Map<string, Set<() => void>>();
  const count = (action: string) => void (counts[action] = (counts[action] ?? 0) + 1);
  const ring = (queueUrl: string) => {
    count('SendMessage');
    rings.set(queueUrl, (rings.get(queueUrl) ?? 0) + 1);
    for (const wake of waiting.get(queueUrl) ?? []) wake();
    waiting.delete(queueUrl);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const action = String(req.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    const body = JSON.parse(text || '{}') as { QueueUrl?: string; WaitTimeSeconds?: number; Entries?: Array<{ Id: string }> };
    count(action);
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    const queueUrl = String(body.QueueUrl);
    if (action === 'ReceiveMessage') {
      if (!rings.get(queueUrl)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, (body.WaitTimeSeconds ?? 0) * 1000);
          const set = waiting.get(queueUrl) ?? new Set();
          waiting.set(queueUrl, set);
          set.add(() => (clearTimeout(timer), resolve()));
          // The consumer gave up the poll (stop): the response's own close, not the kept-alive socket's.
          res.once('close', () => (clearTimeout(timer), resolve()));
        });
      }
      const n = rings.get(queueUrl) ?? 0;
      rings.delete(queueUrl);
      res.end(JSON.stringify(n > 0 ? { Messages: Array.from({ length: Math.min(n, 10) }, (_, i) => ({ MessageId: `m${i}`, ReceiptHandle: `h${i}`, Body: '{}' })) } : {}));
    } else if (action === 'DeleteMessageBatch') {
      res.end(JSON.stringify({ Successful: (body.Entries ?? []).map((e) => ({ Id: e.Id })), Failed: [] }));
    } else {
      res.statusCode = 400;
      res.end(JSON.stringify({ __type: 'InvalidAction', message: action }));
    }
  };
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const queueUrls = new Map<string, string>();
  return {
    url,
    doorbellQueues: {
      create: async (group, createdAt) => {
        count('CreateQueue');
        const queueUrl = `${url}/000000000000/${doorbellQueueName('bench', group, createdAt)}`;
        queueUrls.set(group, queueUrl);
        return queueUrl;
      },
      remove: async () => undefined,
    },
    requests: () => ({ ...counts }),
    forwardRings: (doorbell, group) => {
      let active = true;
      void (async () => {
        let seen = doorbell.rings.get(group) ?? 0;
        while (active) {
          // A ring after the mark ends the wait at once; one before it is in `rings`.
          const mark = doorbell.mark();
          const now = doorbell.rings.get(group) ?? 0;
          if (now > seen) {
            seen = now;
            const queueUrl = queueUrls.get(group);
            if (queueUrl) ring(queueUrl);
            continue;
          }
          await doorbell.wait(group, 1000, mark);
        }
      })();
      return () => void (active = false);
    },
    stop: async () => {
      for (const set of waiting.values()) for (const wake of set) wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
