/**
 * What the push cost rows (`push-1`, `push-10`; issue 15) need besides the
 * HTTP and DynamoDB counters every cost row has: a local endpoint the push
 * group POSTs to, and counters for the parts of push delivery that run
 * outside any HTTP request of the local runtime —
 *   - the dispatcher: invocations and handler time (billed ms) of the stream
 *     poller, i.e. what the event source mapping would invoke on AWS;
 *   - the push queue: jobs sent (SendMessageBatch requests on AWS, 10 jobs a
 *     call) and jobs handed to the worker (each received and deleted);
 *   - the push worker: invocations and handler time (billed ms).
 * They are read into the meter's `other` counters, so a cost window holds
 * what happened in it (report.ts prices them).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Meter } from './meter.js';
import { sleep } from './stats.js';

/** The slice of the local push bus this needs (lib/adapters/local/push-bus.ts). */
interface PushBusLike {
  setTarget(target: ((event: { Records: unknown[] }) => Promise<unknown>) | undefined): void;
  send(jobs: readonly unknown[], delayMs?: number): Promise<void>;
}

/** The slice of the stream poller's counters this reads. */
interface PollerLike {
  stats: { invocations: number; handlerBilledMs: number; recordsPassed: number };
}

export interface PushProbe {
  /** The endpoint the push groups of the cost rows POST to (answers 200 `{}`). */
  url: string;
  /** Waits until the endpoint has received `expected` messages in all and no push worker invocation runs. */
  delivered(expected: number, timeoutMs?: number): Promise<void>;
  /** Waits until nothing moved in the dispatcher and the push worker for `quietMs` (bounded by `timeoutMs`). */
  settled(quietMs?: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPushProbe(meter: Meter, bus: PushBusLike, poller: PollerLike): Promise<PushProbe> {
  const endpoint = { requests: 0, messages: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      endpoint.requests++;
      endpoint.bytes += body.length;
      try {
        endpoint.messages += (JSON.parse(body.toString('utf8')) as { data?: { messages?: unknown[] } }).data?.messages?.length ?? 0;
      } catch {
        // not a push request: counted as a request only
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  // The push worker as the local runtime runs it (local/runtime.ts startPush: its AWS timeout), timed and counted.
  const worker = (await import('../functions/push/worker.js')).handler;
  const { lambdaContext } = await import('../local/gateway.js');
  const { PUSH_WORKER_TIMEOUT_MS } = await import('../lib/ports/push-queue.js');
  const work = { invocations: 0, billedMs: 0, jobsReceived: 0, inFlight: 0 };
  bus.setTarget(async (event) => {
    work.invocations++;
    work.jobsReceived += event.Records.length;
    work.inFlight++;
    const started = performance.now();
    try {
      return await worker(event as never, lambdaContext('push-worker', randomUUID(), PUSH_WORKER_TIMEOUT_MS));
    } finally {
      work.billedMs += Math.max(1, Math.ceil(performance.now() - started));
      work.inFlight--;
    }
  });
  const sent = { jobs: 0, batchRequests: 0 };
  const send = bus.send.bind(bus);
  bus.send = (jobs, delayMs) => {
    sent.jobs += jobs.length;
    sent.batchRequests += Math.ceil(jobs.length / 10);
    return send(jobs, delayMs);
  };

  meter.addSource('dispatcher', () => ({ invocations: poller.stats.invocations, billedMs: poller.stats.handlerBilledMs, records: poller.stats.recordsPassed }));
  meter.addSource('pushQueue', () => ({ jobsSent: sent.jobs, sendRequests: sent.batchRequests, jobsReceived: work.jobsReceived }));
  meter.addSource('pushWorker', () => ({ invocations: work.invocations, billedMs: work.billedMs }));
  meter.addSource('pushEndpoint', () => ({ ...endpoint }));

  const moved = () => `${poller.stats.invocations}/${work.invocations}/${endpoint.requests}/${sent.jobs}`;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    delivered: async (expected, timeoutMs = 30_000) => {
      const until = Date.now() + timeoutMs;
      while (endpoint.messages < expected || work.inFlight > 0) {
        if (Date.now() > until) throw new Error(`push: ${endpoint.messages} of ${expected} messages delivered (${work.inFlight} worker invocations running) after ${timeoutMs} ms`);
        await sleep(5);
      }
    },
    settled: async (quietMs = 500, timeoutMs = 10_000) => {
      const until = Date.now() + timeoutMs;
      let last = moved();
      let since = Date.now();
      while (Date.now() - since < quietMs && Date.now() < until) {
        await sleep(20);
        const now = moved();
        if (now !== last || work.inFlight > 0) {
          last = now;
          since = Date.now();
        }
      }
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
