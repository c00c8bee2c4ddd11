/** `sluice send`: one message (the body from an argument, a file or standard input), or NDJSON in bulk. */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { SluiceClient } from '../../../lib/client/client.js';
import type { SendInput } from '../../../lib/client/types.js';
import { withContext } from '../context.js';
import { UsageError } from '../errors.js';
import { countLines, sendNdjson } from '../ndjson.js';
import type { Out } from '../output.js';
import { collect, deliverAt, integer, property } from '../parsers.js';

interface SendOptions {
  file?: string;
  base64?: boolean;
  ndjson?: boolean;
  batchSize: number;
  tag?: string;
  key?: string[];
  property?: Record<string, string>;
  shardKey?: string;
  delay?: number;
  deliverAt?: string | number;
  dedupId?: string;
  transaction?: string;
  checkAfter?: number;
}

export function addSendCommand(program: Command): void {
  program
    .command('send <topic> [body]')
    .description('send a message: the body from the argument, --file, or standard input; --ndjson sends one JSON send per line')
    .option('--file <path>', 'read the body (or, with --ndjson, the lines) from a file')
    .option('--base64', 'send the bytes as base64 (binary files)')
    .option('--ndjson', 'bulk mode: one JSON send ({"body": …, "shardKey": …}) per line, 100 per request')
    .option('--batch-size <n>', 'NDJSON lines per request', integer('--batch-size', 1, 100), 100)
    .option('--tag <tag>', 'tag')
    .option('--key <key>', 'lookup key (repeatable)', collect)
    .option('--property <name=value>', 'property (repeatable)', property)
    .option('--shard-key <key>', 'shard key (fifo topics)')
    .option('--delay <seconds>', 'deliver after this many seconds', integer('--delay', 0, 1_209_600))
    .option('--deliver-at <time>', 'deliver at an RFC 3339 time or epoch milliseconds', deliverAt)
    .option('--dedup-id <id>', 'idempotency key (default: a fresh UUID)')
    .option('--transaction <producerGroup>', 'send as a half message of this producer group')
    .option('--check-after <seconds>', 'first transaction check after (with --transaction)', integer('--check-after', 1, 3600))
    .action(withContext(async ({ client, out }, topic: string, body: string | undefined, options: SendOptions) => {
      if (options.ndjson) return sendLines(client, out, topic, body, options);
      const bytes = await bodyOf(body, options);
      if (options.checkAfter !== undefined && !options.transaction) throw new UsageError('--check-after goes with --transaction.');
      if (options.delay !== undefined && options.deliverAt !== undefined) throw new UsageError('Give either --delay or --deliver-at, not both.');
      const message: SendInput = {
        body: options.base64 ? new Uint8Array(Buffer.from(bytes)) : Buffer.from(bytes).toString('utf8'),
        ...(options.tag ? { tag: options.tag } : {}),
        ...(options.key?.length ? { keys: options.key } : {}),
        ...(options.property ? { properties: options.property } : {}),
        ...(options.shardKey ? { shardKey: options.shardKey } : {}),
        ...(options.delay !== undefined ? { delaySeconds: options.delay } : {}),
        ...(options.deliverAt !== undefined ? { deliverAt: options.deliverAt } : {}),
        ...(options.dedupId ? { dedupId: options.dedupId } : {}),
        ...(options.transaction
          ? { transaction: { producerGroup: options.transaction, ...(options.checkAfter !== undefined ? { checkAfterSeconds: options.checkAfter } : {}) } }
          : {}),
      };
      out.print(await client.send(topic, message), (result) => {
        const extra = [
          result.sequence !== undefined ? `sequence ${result.sequence}` : '',
          result.deliverAt ? `deliverAt ${result.deliverAt}` : '',
          result.transactionId ? `transaction ${result.transactionId}` : '',
        ].filter(Boolean);
        return `${result.messageId} ${result.state}${extra.length ? ` (${extra.join(', ')})` : ''}`;
      });
    }));
}

/** The body of a single send: the argument, the file (`-` is standard input), or standard input when it is not a terminal. */
async function bodyOf(body: string | undefined, options: SendOptions): Promise<Buffer | string> {
  if (body !== undefined) {
    if (options.file) throw new UsageError('Give the body either as an argument or with --file, not both.');
    return body;
  }
  if (options.file && options.file !== '-') {
    return readFile(options.file).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${options.file}: ${error.code ?? error.message}.`);
    });
  }
  if (!process.stdin.isTTY) return readStdin();
  throw new UsageError('Give the message body as an argument, with --file <path>, or on standard input.');
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `--ndjson`: the lines of the file or standard input, in batches; exit code 1 when some lines failed. */
async function sendLines(client: SluiceClient, out: Out, topic: string, body: string | undefined, options: SendOptions): Promise<void> {
  if (body !== undefined) throw new UsageError('--ndjson reads its lines from --file or standard input, not from an argument.');
  const fromFile = options.file && options.file !== '-' ? options.file : undefined;
  if (!fromFile && process.stdin.isTTY) throw new UsageError('--ndjson needs --file <path> or lines on standard input.');
  const total = fromFile ? await countLines(fromFile).catch(() => undefined) : undefined;
  const input = fromFile ? createReadStream(fromFile) : process.stdin;
  if (fromFile) {
    await new Promise<void>((resolve, reject) => (input.once('open', () => resolve()), input.once('error', reject))).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${fromFile}: ${error.code ?? error.message}.`);
    });
  }
  const summary = await sendNdjson(client, topic, input, { batchSize: options.batchSize, total });
  out.print(summary, (s) => `Sent ${s.sent} messages in ${s.batches} request(s)${s.failed ? `; ${s.failed} failed` : ''}.`);
  if (!out.json) for (const f of summary.failures) process.stderr.write(`line ${f.line}: ${f.code}: ${f.detail}\n`);
  if (summary.failed > 0) process.exitCode = 1;
}
