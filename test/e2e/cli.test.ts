/**
 * The `sluice` CLI as a subprocess (bin/sluice.js, as `npx sluice` runs it) against the local runtime.
 * Each run starts Node and tsx (about a second on a quiet machine), hence the generous time limits.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { SluiceClient } from '../../lib/client/index.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

const BIN = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

let runtime: LocalRuntime;
let client: SluiceClient;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sluice(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, SLUICE_ENDPOINT: runtime.url, SLUICE_API_TOKEN: TOKEN, SLUICE_TIMEOUT: '60', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
});
afterAll(async () => runtime?.stop());

describe('sluice CLI', () => {
  it('administers topics and groups, sends, receives and commits', async () => {
    const topic = await sluice(['topics', 'put', 'cli-orders', '--json']);
    expect(topic.code, topic.stderr).toBe(0);
    expect(JSON.parse(topic.stdout)).toMatchObject({ name: 'cli-orders', type: 'standard' });

    const group = await sluice(['groups', 'put', 'cli-billing', '--subscribe', 'cli-orders', '--visibility', '30']);
    expect(group.code, group.stderr).toBe(0);
    expect(group.stdout).toContain('Group cli-billing (serialized) subscribes to cli-orders.');

    const [sent, piped] = await Promise.all([
      sluice(['send', 'cli-orders', 'hello from the cli', '--key', 'order-7', '--tag', 'created']),
      sluice(['send', 'cli-orders', '--json'], { stdin: 'from stdin' }),
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    const messageId = /^(\S+) deliverable$/m.exec(sent.stdout)?.[1];
    expect(messageId, sent.stdout).toBeDefined();
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ state: 'deliverable' });

    const received = await sluice(['--json', 'receive', 'cli-billing', '--max', '10', '--wait', '2']);
    expect(received.code, received.stderr).toBe(0);
    const { messages } = JSON.parse(received.stdout) as { messages: Array<{ messageId: string; body: string; receiptHandle: string }> };
    expect(messages.map((m) => m.body).sort()).toEqual(['from stdin', 'hello from the cli']);

    const committed = await sluice(['commit', 'cli-billing', ...messages.map((m) => m.receiptHandle)]);
    expect(committed.code, committed.stderr).toBe(0);
    expect(committed.stdout.trim().split('\n').map((line) => line.split(/\s+/)[1])).toEqual(['committed', 'committed']);

    const [found, got, listed] = await Promise.all([
      sluice(['--json', 'message', 'find', 'cli-orders', '--key', 'order-7']),
      sluice(['message', 'get', 'cli-orders', messageId!]),
      sluice(['topics', 'list']),
    ]);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout).messages.map((m: { messageId: string }) => m.messageId)).toEqual([messageId]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^cli-billing\s+committed\s+1/m);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+TYPE/);
    expect(listed.stdout).toMatch(/^cli-orders\s+standard/m);
  }, 120_000);

  it('sends NDJSON in batches of 100, reports bad lines, and tails the group', async () => {
    const lines = Array.from({ length: 230 }, (_, i) => JSON.stringify({ body: `bulk-${i}`, keys: [`bulk-${i}`] }));
    lines.splice(120, 0, '{not json');
    const bulk = await sluice(['--json', 'send', 'cli-orders', '--ndjson'], { stdin: `${lines.join('\n')}\n` });
    expect(bulk.code, bulk.stderr).toBe(1); // one line failed
    expect(JSON.parse(bulk.stdout)).toMatchObject({ sent: 230, failed: 1, batches: 3, failures: [{ line: 121, code: 'InvalidJson' }] });
    expect(await client.getGroup('cli-billing')).toMatchObject({ backlog: 230 });

    const tail = await sluice(['--json', 'tail', 'cli-billing', '--limit', '230', '--max', '100', '--wait', '2']);
    expect(tail.code, tail.stderr).toBe(0);
    const bodies = tail.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { body: string }).body);
    expect(new Set(bodies).size).toBe(230);
    expect(await client.getGroup('cli-billing')).toMatchObject({ backlog: 0, inFlight: 0 });
  }, 120_000);

  it('exits 2 on bad arguments, 3 when the endpoint is unreachable, 1 with the problem code on 4xx', async () => {
    const port = await closedPort();
    const [badChoice, missingArg, badNumber, unreachable, notFound, invalid] = await Promise.all([
      sluice(['topics', 'put', 'x', '--type', 'queue']),
      sluice(['receive']),
      sluice(['receive', 'cli-billing', '--max', '500']),
      sluice(['--endpoint', `http://127.0.0.1:${port}`, 'topics', 'list']),
      sluice(['topics', 'get', 'no-such-topic']),
      sluice(['groups', 'put', 'cli-bad', '--subscribe', 'not a name!']),
    ]);
    expect(badChoice.code).toBe(2);
    expect(badChoice.stderr).toContain('Allowed choices are standard, fifo');
    expect(missingArg.code).toBe(2);
    expect(missingArg.stderr).toContain("missing required argument 'group'");
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain('--max must be an integer from 1 to 100');

    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain(`Cannot reach Sluice at http://127.0.0.1:${port} (ECONNREFUSED)`);
    expect(unreachable.stderr).toContain('npm start');

    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toMatch(/^TopicNotFound: Topic 'no-such-topic' does not exist\./);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^InvalidArgument: /);
    expect(invalid.stderr).toContain('- subscriptions/0/topic:');
  }, 120_000);
});
