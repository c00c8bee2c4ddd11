/** A real HTTP endpoint on loopback for push tests: records every request, answers as the test says. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PushJob, PushQueue } from '../../lib/ports/push-queue.js';

export interface PushedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  messages: Array<{ messageId: string; topic: string; body: string; shardKey: string | null; sequence: number | null; deliveryCount: number }>;
}

/** What the endpoint answers: a status and a JSON body, or 'hang' (never answers). */
export type PushAnswer = { status: number; body?: unknown } | 'hang';

export interface PushEndpoint {
  url: string;
  requests: PushedRequest[];
  /** Decides each answer (default 204). */
  answer: (request: PushedRequest) => PushAnswer | Promise<PushAnswer>;
  /** Resolves once `n` requests have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function pushEndpoint(): Promise<PushEndpoint> {
  const requests: PushedRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const endpoint: PushEndpoint = {
    url: '',
    requests,
    answer: () => ({ status: 204 }),
    waitFor: (n, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${requests.length} of ${n} push requests arrived`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as { data: { messages: PushedRequest['messages'] } };
      const request: PushedRequest = { headers: req.headers, body, receivedAt: Date.now(), messages: parsed.data.messages };
      requests.push(request);
      for (const w of waiters.filter((w) => requests.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      void Promise.resolve(endpoint.answer(request)).then((answer) => {
        if (answer === 'hang') return;
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return endpoint;
}

/** A push queue that only records the jobs sent to it (tests drain the worker themselves). */
export class RecordingPushQueue implements PushQueue {
  readonly sent: Array<{ job: PushJob; delayMs: number }> = [];
  async send(jobs: readonly PushJob[], delayMs = 0) {
    for (const job of jobs) this.sent.push({ job, delayMs });
  }
}
