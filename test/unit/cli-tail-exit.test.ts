import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const message = {
  messageId: 'm1', receiptHandle: 'h1', topic: 't', body: 'hello', encoding: 'utf8', tag: null, keys: [], properties: {},
  shardKey: null, sequence: null, sentAt: '2026-01-01T00:00:00.000Z', deliverableAt: '2026-01-01T00:00:00.000Z', deliveryCount: 1,
};
const expired = { type: 'urn:sluice:problem:ReceiptHandleExpired', title: 'Receipt handle expired', status: 409, detail: 'The lease ended.', code: 'ReceiptHandleExpired' };

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/groups/g/receive') return res.end(JSON.stringify({ messages: [message] }));
    if (req.url === '/v1/groups/g/commit') {
      const { entries } = JSON.parse(body) as { entries: Array<{ receiptHandle: string }> };
      return res.end(JSON.stringify({ results: entries.map((e) => ({ receiptHandle: e.receiptHandle, error: expired })) }));
    }
    res.statusCode = 404;
    res.end('{}');
  });
});
let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * `sluice tail --commit` (the default) exits 1 when a commit failed, as `sluice commit` does: the
 * message was not committed and comes back (until 2026-12-04 it exited 0; found by an audit).
 */
describe('sluice tail', () => {
  it('exits 1 when a commit failed, as `sluice commit` does', async () => {
    const commit = await runCli(['--endpoint', endpoint, '--auth', 'none', 'commit', 'g', 'h1']);
    expect(commit.code).toBe(1); // the reference behaviour

    const tail = await runCli(['--endpoint', endpoint, '--auth', 'none', 'tail', 'g', '--limit', '1']);
    expect(tail.stderr).toContain('ReceiptHandleExpired'); // printed…
    expect(tail.code).toBe(1); // …but the run "succeeds": the message was not committed and comes back
  });
});
