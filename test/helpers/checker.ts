/** A real producer checker endpoint on loopback, built with the SDK's createCheckerHandler. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCheckerHandler } from '../../lib/client/checker.js';
import type { TransactionCheck } from '../../lib/client/types.js';

export type Answer = 'commit' | 'rollback' | 'unknown' | { http: number } | { sleepMs: number; then: 'commit' | 'rollback' | 'unknown' };

export interface TestChecker {
  url: string;
  /** Set once the producer group answered its signing secret(s). */
  secrets: string[];
  calls: Array<{ transactionId: string; checkCount: number; verified: boolean; status: number }>;
  answer: (check: TransactionCheck) => Answer;
  close(): Promise<void>;
}

export async function startChecker(answer: TestChecker['answer']): Promise<TestChecker> {
  const checker: TestChecker = { url: '', secrets: [], calls: [], answer, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let planned = 'unknown' as Answer;
      const handler = createCheckerHandler({
        secret: checker.secrets.length ? checker.secrets : ['whsec_' + Buffer.alloc(32).toString('base64')],
        check: (check) => {
          planned = checker.answer(check);
          if (typeof planned === 'string') return planned;
          if ('then' in planned) return planned.then;
          return 'unknown';
        },
      });
      const result = await handler.handle({ headers: req.headers, body });
      const parsed = (() => {
        try {
          return JSON.parse(body) as { data?: { transactionId?: string; checkCount?: number } };
        } catch {
          return {};
        }
      })();
      const special = planned;
      if (typeof special === 'object' && 'sleepMs' in special) await new Promise((r) => setTimeout(r, special.sleepMs));
      const status = typeof special === 'object' && 'http' in special ? special.http : result.statusCode;
      checker.calls.push({
        transactionId: parsed.data?.transactionId ?? '',
        checkCount: parsed.data?.checkCount ?? 0,
        verified: result.statusCode !== 401,
        status,
      });
      res.writeHead(status, result.headers);
      res.end(typeof special === 'object' && 'http' in special ? '{"error":"injected"}' : result.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  checker.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/checks`;
  checker.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return checker;
}
