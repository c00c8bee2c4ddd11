/**
 * The `sluice` program: its commands, and how a run ends (messages and exit codes).
 *
 * Exit codes: 0 ok, 1 the API answered an error (or some entries failed),
 * 2 usage error (bad arguments or configuration), 3 the endpoint is unreachable.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
// The client modules directly, not the package index: a command starts faster without the consumer and checker.
import { SluiceClient, type AuthMode } from '../../lib/client/client.js';
import { SluiceApiError, SluiceConfigurationError, SluiceConnectionError } from '../../lib/client/errors.js';
import type { Delivered, DeliveryMode, SendInput, Subscription } from '../../lib/client/types.js';
import { BulkStoppedError, countLines, sendNdjson } from './ndjson.js';
import { bodyPreview, createOut, deliveredLines, fields, table, type Out } from './output.js';

const env = process.env;
const DEFAULT_ENDPOINT = 'http://127.0.0.1:3000';

/** A mistake in how the command was called: exit code 2. */
class UsageError extends Error {}

interface GlobalOptions {
  endpoint: string;
  token?: string;
  json?: boolean;
  auth: AuthMode;
  region?: string;
}

// ── argument parsers ─────────────────────────────────────────────────────

const integer = (name: string, min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}.`);
  }
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];
const property = (value: string, previous: Record<string, string> = {}) => {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`'${value}' is not NAME=VALUE.`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
};
/** `orders` or `orders:created,paid` (a topic and its tag filter). */
const subscription = (value: string, previous: Subscription[] = []): Subscription[] => {
  const [topic, tags] = value.split(':', 2);
  if (!topic) throw new InvalidArgumentError(`'${value}' is not TOPIC or TOPIC:TAG,TAG.`);
  return [...previous, tags ? { topic, tags: tags.split(',').filter(Boolean) } : { topic }];
};
const deliverAt = (value: string): string | number => (/^\d+$/.test(value) ? Number(value) : value);

// ── context ──────────────────────────────────────────────────────────────

function context(command: Command): { client: SluiceClient; out: Out; endpoint: string } {
  const options = command.optsWithGlobals<GlobalOptions>();
  const client = new SluiceClient({
    endpoint: options.endpoint,
    token: options.token || undefined,
    auth: options.auth,
    region: options.region || undefined,
    retry: { maxAttempts: 3 },
  });
  return { client, out: createOut(Boolean(options.json)), endpoint: options.endpoint };
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Ctrl-C aborts the running request: a clean exit for `tail`, `receive --wait`. */
function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  process.once('SIGTERM', () => controller.abort(new Error('terminated')));
  return controller.signal;
}

// ── the program ──────────────────────────────────────────────────────────

export function buildProgram(): Command {
  const program = new Command('sluice')
    .description('Command line for Sluice, the serverless message queue.')
    .version('0.1.0')
    .addOption(new Option('--endpoint <url>', 'Sluice base URL').env('SLUICE_ENDPOINT').default(DEFAULT_ENDPOINT))
    .addOption(new Option('--token <token>', 'bearer token of the local runtime').env('SLUICE_API_TOKEN'))
    .addOption(new Option('--auth <mode>', 'authentication').choices(['auto', 'bearer', 'sigv4', 'none']).default('auto'))
    .addOption(new Option('--region <region>', 'AWS region for SigV4 (default: from the endpoint)').env('AWS_REGION'))
    .option('--json', 'print JSON instead of tables')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();

  // Subcommands inherit exitOverride and output settings from their parent when created through .command().
  const topics = program.command('topics').description('manage topics');
  topics
    .command('list')
    .description('list topics')
    .action(async (_options, command: Command) => {
      const { client, out } = context(command);
      const all = [];
      for await (const topic of client.iterateTopics()) all.push(topic);
      if (out.json) return out.data({ topics: all });
      if (all.length === 0) return out.line('No topics.');
      out.line(table(['NAME', 'TYPE', 'RETENTION', 'MAX-DELAY', 'ORDER-GROUP', 'CREATED'], all.map((t) => [t.name, t.type, `${t.retentionSeconds}s`, `${t.maxDelaySeconds}s`, t.orderGroup, t.createdAt])));
    });
  topics
    .command('get <topic>')
    .description('show a topic with its message count and subscribers')
    .action(async (name: string, _options, command: Command) => {
      const { client, out } = context(command);
      const topic = await client.getTopic(name);
      if (out.json) return out.data(topic);
      out.line(fields(topic));
    });
  topics
    .command('put <topic>')
    .description('create or update a topic')
    .addOption(new Option('--type <type>', 'topic type').choices(['standard', 'fifo']).default('standard'))
    .option('--retention <seconds>', 'retention (300-1209600)', integer('--retention', 300, 1_209_600))
    .option('--max-delay <seconds>', 'furthest scheduled delivery allowed', integer('--max-delay', 0, 1_209_600))
    .option('--order-group <name>', 'time-order group (fifo topics)')
    .action(async (name: string, options: { type: 'standard' | 'fifo'; retention?: number; maxDelay?: number; orderGroup?: string }, command: Command) => {
      const { client, out } = context(command);
      const topic = await client.putTopic(name, {
        type: options.type,
        ...(options.retention !== undefined ? { retentionSeconds: options.retention } : {}),
        ...(options.maxDelay !== undefined ? { maxDelaySeconds: options.maxDelay } : {}),
        ...(options.orderGroup ? { orderGroup: options.orderGroup } : {}),
      });
      if (out.json) return out.data(topic);
      out.line(`Topic ${topic.name} (${topic.type}) is ready.`);
    });
  topics
    .command('delete <topic>')
    .description('delete a topic and its messages')
    .action(async (name: string, _options, command: Command) => {
      const { client, out } = context(command);
      await client.deleteTopic(name);
      if (out.json) return out.data({ deleted: name });
      out.line(`Deleted topic ${name}.`);
    });

  const groups = program.command('groups').description('manage consumer groups');
  groups
    .command('list')
    .description('list consumer groups')
    .action(async (_options, command: Command) => {
      const { client, out } = context(command);
      const all = [];
      for await (const group of client.iterateGroups()) all.push(group);
      if (out.json) return out.data({ groups: all });
      if (all.length === 0) return out.line('No consumer groups.');
      out.line(
        table(
          ['NAME', 'MODE', 'VISIBILITY', 'MAX-DELIVERIES', 'DEAD-LETTER', 'SUBSCRIPTIONS'],
          all.map((g) => [g.name, g.deliveryMode, `${g.visibilityTimeoutSeconds}s`, g.maxDeliveries, g.deadLetterTopic, g.subscriptions.map((s) => (s.tags ? `${s.topic}:${s.tags.join(',')}` : s.topic)).join(' ')]),
        ),
      );
    });
  groups
    .command('get <group>')
    .description('show a group with backlog, in-flight and dead-letter statistics')
    .action(async (name: string, _options, command: Command) => {
      const { client, out } = context(command);
      const group = await client.getGroup(name);
      if (out.json) return out.data(group);
      out.line(fields(group));
    });
  groups
    .command('put <group>')
    .description('create or update a consumer group')
    .requiredOption('--subscribe <topic[:tags]>', 'subscribe to a topic, optionally only to some tags (repeatable)', subscription)
    .addOption(new Option('--mode <mode>', 'delivery mode for FIFO topics').choices(['serialized', 'protected', 'concurrent']))
    .option('--visibility <seconds>', 'visibility timeout', integer('--visibility', 1, 43_200))
    .option('--max-deliveries <n>', 'deliveries before dead-lettering', integer('--max-deliveries', 1, 1000))
    .option('--dead-letter-topic <topic>', 'dead-letter topic (default <group>-dlq)')
    .action(
      async (
        name: string,
        options: { subscribe: Subscription[]; mode?: DeliveryMode; visibility?: number; maxDeliveries?: number; deadLetterTopic?: string },
        command: Command,
      ) => {
        const { client, out } = context(command);
        const group = await client.putGroup(name, {
          subscriptions: options.subscribe,
          ...(options.mode ? { deliveryMode: options.mode } : {}),
          ...(options.visibility !== undefined ? { visibilityTimeoutSeconds: options.visibility } : {}),
          ...(options.maxDeliveries !== undefined ? { maxDeliveries: options.maxDeliveries } : {}),
          ...(options.deadLetterTopic ? { deadLetterTopic: options.deadLetterTopic } : {}),
        });
        if (out.json) return out.data(group);
        out.line(`Group ${group.name} (${group.deliveryMode}) subscribes to ${group.subscriptions.map((s) => s.topic).join(', ')}.`);
      },
    );

  const producers = program.command('producers').description('manage producer groups (transaction checkers)');
  producers
    .command('put <producerGroup>')
    .description('create or update a producer group; prints the signing secret on creation')
    .requiredOption('--checker-url <url>', 'where Sluice sends transaction.check webhooks')
    .option('--check-interval <seconds>', 'seconds between checks', integer('--check-interval', 1, 3600))
    .option('--max-checks <n>', 'checks before --on-max-checks applies', integer('--max-checks', 1, 1000))
    .addOption(new Option('--on-max-checks <action>', 'what to do after the last check').choices(['rollback', 'commit', 'keep']))
    .action(
      async (name: string, options: { checkerUrl: string; checkInterval?: number; maxChecks?: number; onMaxChecks?: 'rollback' | 'commit' | 'keep' }, command: Command) => {
        const { client, out } = context(command);
        const producer = await client.putProducer(name, {
          checkerUrl: options.checkerUrl,
          ...(options.checkInterval !== undefined ? { checkIntervalSeconds: options.checkInterval } : {}),
          ...(options.maxChecks !== undefined ? { maxChecks: options.maxChecks } : {}),
          ...(options.onMaxChecks ? { onMaxChecks: options.onMaxChecks } : {}),
        });
        if (out.json) return out.data(producer);
        out.line(fields({ ...producer }));
      },
    );
  producers
    .command('get <producerGroup>')
    .description('show a producer group')
    .action(async (name: string, _options, command: Command) => {
      const { client, out } = context(command);
      const producer = await client.getProducer(name);
      if (out.json) return out.data(producer);
      out.line(fields({ ...producer }));
    });
  producers
    .command('rotate-secret <producerGroup>')
    .description('issue a new checker signing secret')
    .action(async (name: string, _options, command: Command) => {
      const { client, out } = context(command);
      const producer = await client.rotateProducerSecret(name);
      if (out.json) return out.data(producer);
      out.line(fields({ ...producer }));
    });

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
    .action(
      async (
        topic: string,
        body: string | undefined,
        options: {
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
        },
        command: Command,
      ) => {
        const { client, out } = context(command);
        if (options.ndjson) {
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
          if (out.json) out.data(summary);
          else {
            out.line(`Sent ${summary.sent} messages in ${summary.batches} request(s)${summary.failed ? `; ${summary.failed} failed` : ''}.`);
            for (const f of summary.failures) process.stderr.write(`line ${f.line}: ${f.code}: ${f.detail}\n`);
          }
          if (summary.failed > 0) process.exitCode = 1;
          return;
        }
        let bytes: Buffer | string;
        if (body !== undefined) {
          if (options.file) throw new UsageError('Give the body either as an argument or with --file, not both.');
          bytes = body;
        } else if (options.file && options.file !== '-') {
          bytes = await readFile(options.file).catch((error: NodeJS.ErrnoException) => {
            throw new UsageError(`Cannot read ${options.file}: ${error.code ?? error.message}.`);
          });
        } else if (!process.stdin.isTTY) {
          bytes = await readStdin();
        } else {
          throw new UsageError('Give the message body as an argument, with --file <path>, or on standard input.');
        }
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
        const result = await client.send(topic, message);
        if (out.json) return out.data(result);
        const extra = [
          result.sequence !== undefined ? `sequence ${result.sequence}` : '',
          result.deliverAt ? `deliverAt ${result.deliverAt}` : '',
          result.transactionId ? `transaction ${result.transactionId}` : '',
        ].filter(Boolean);
        out.line(`${result.messageId} ${result.state}${extra.length ? ` (${extra.join(', ')})` : ''}`);
      },
    );

  program
    .command('receive <group>')
    .description('lease messages of a group and print them with their receipt handles')
    .option('--max <n>', 'messages at most', integer('--max', 1, 100), 10)
    .option('--wait <seconds>', 'long-poll up to this long', integer('--wait', 0, 20), 0)
    .option('--visibility <seconds>', 'lease length (default: the group\'s)', integer('--visibility', 0, 43_200))
    .option('--topic <topic>', 'only from this topic (repeatable)', collect)
    .action(async (group: string, options: { max: number; wait: number; visibility?: number; topic?: string[] }, command: Command) => {
      const { client, out } = context(command);
      const messages = await client.receive(
        group,
        {
          maxMessages: options.max,
          waitSeconds: options.wait,
          ...(options.visibility !== undefined ? { visibilityTimeoutSeconds: options.visibility } : {}),
          ...(options.topic?.length ? { topics: options.topic } : {}),
        },
        { signal: interruptSignal() },
      );
      if (out.json) return out.data({ messages });
      if (messages.length === 0) return out.line('No messages.');
      for (const m of messages) out.line(deliveredLines(m));
    });

  program
    .command('commit <group> <receiptHandle...>')
    .description('commit received messages by their receipt handles')
    .action(async (group: string, handles: string[], _options, command: Command) => {
      const { client, out } = context(command);
      const { results } = await client.commit(group, handles);
      if (out.json) out.data({ results });
      else for (const r of results) out.line('error' in r ? `${r.receiptHandle}  ${r.error.code}: ${r.error.detail}` : `${r.receiptHandle}  ${r.status}`);
      if (results.some((r) => 'error' in r)) process.exitCode = 1;
    });

  program
    .command('tail <group>')
    .description('receive, print and commit messages until Ctrl-C')
    .option('--no-commit', 'print without committing (each message stays leased until its visibility timeout)')
    .option('--max <n>', 'messages per receive', integer('--max', 1, 100), 10)
    .option('--wait <seconds>', 'long-poll wait per receive', integer('--wait', 1, 20), 20)
    .option('--visibility <seconds>', 'lease length', integer('--visibility', 1, 43_200))
    .option('--limit <n>', 'stop after this many messages', integer('--limit', 1, Number.MAX_SAFE_INTEGER))
    .action(async (group: string, options: { commit: boolean; max: number; wait: number; visibility?: number; limit?: number }, command: Command) => {
      const { client, out } = context(command);
      const signal = interruptSignal();
      const seen = new Set<string>();
      let printed = 0;
      const print = (m: Delivered) => (out.json ? out.line(JSON.stringify(m)) : out.line(`${deliveredLines(m)}\n`));
      while (!signal.aborted && (options.limit === undefined || printed < options.limit)) {
        let messages: Delivered[];
        try {
          messages = await client.receive(
            group,
            {
              maxMessages: options.limit === undefined ? options.max : Math.min(options.max, options.limit - printed),
              waitSeconds: options.wait,
              ...(options.visibility !== undefined ? { visibilityTimeoutSeconds: options.visibility } : {}),
            },
            { signal },
          );
        } catch (error) {
          if (signal.aborted) break;
          throw error;
        }
        const fresh = options.commit ? messages : messages.filter((m) => !seen.has(`${m.topic}/${m.messageId}`));
        for (const m of fresh) {
          seen.add(`${m.topic}/${m.messageId}`);
          print(m);
          printed++;
        }
        if (options.commit && messages.length > 0) {
          const { results } = await client.commit(group, messages.map((m) => m.receiptHandle));
          for (const r of results) if ('error' in r) process.stderr.write(`commit ${r.receiptHandle}: ${r.error.code}: ${r.error.detail}\n`);
        }
      }
    });

  const message = program.command('message').description('look messages up');
  message
    .command('get <topic> <messageId>')
    .description('a message, its state, and its delivery state per group')
    .action(async (topic: string, id: string, _options, command: Command) => {
      const { client, out } = context(command);
      const found = await client.getMessage(topic, id);
      if (out.json) return out.data(found);
      const { groups: perGroup, ...rest } = found;
      out.line(fields({ ...rest, body: bodyPreview(found, 2000) }));
      if (perGroup.length) {
        out.line();
        out.line(table(['GROUP', 'STATE', 'DELIVERIES', 'COMMITTED'], perGroup.map((g) => [g.group, g.state, g.deliveryCount, g.committedAt])));
      }
    });
  message
    .command('find <topic>')
    .description('messages carrying a key, newest first')
    .requiredOption('--key <key>', 'the key')
    .option('--limit <n>', 'messages at most', integer('--limit', 1, 100), 20)
    .action(async (topic: string, options: { key: string; limit: number }, command: Command) => {
      const { client, out } = context(command);
      const page = await client.findMessages(topic, options.key, { limit: options.limit });
      if (out.json) return out.data(page);
      if (page.messages.length === 0) return out.line(`No message of ${topic} carries the key '${options.key}'.`);
      out.line(table(['MESSAGE', 'STATE', 'SENT', 'BODY'], page.messages.map((m) => [m.messageId, m.state, m.sentAt, bodyPreview(m, 60)])));
      if (page.nextToken) out.line('(more: narrow the key or raise --limit)');
    });
  message
    .command('cancel <topic> <messageId>')
    .description('cancel a scheduled message')
    .action(async (topic: string, id: string, _options, command: Command) => {
      const { client, out } = context(command);
      await client.cancelMessage(topic, id);
      if (out.json) return out.data({ cancelled: id });
      out.line(`Cancelled ${id}.`);
    });

  const tx = program.command('tx').description('resolve or inspect transactions (half messages)');
  tx.command('commit <transactionId>')
    .description('commit: the half message becomes deliverable')
    .action(async (id: string, _options, command: Command) => {
      const { client, out } = context(command);
      const result = await client.commitTransaction(id);
      if (out.json) return out.data(result);
      out.line(`${id} ${result.state}${result.messageId ? `: message ${result.messageId}` : ''}${result.sequence !== undefined ? ` (sequence ${result.sequence})` : ''}.`);
    });
  tx.command('rollback <transactionId>')
    .description('roll back: the half message is never delivered')
    .action(async (id: string, _options, command: Command) => {
      const { client, out } = context(command);
      const result = await client.rollbackTransaction(id);
      if (out.json) return out.data(result);
      out.line(`${id} ${result.state}.`);
    });
  tx.command('get <transactionId>')
    .description('a transaction\'s state and the checks made')
    .action(async (id: string, _options, command: Command) => {
      const { client, out } = context(command);
      const result = await client.getTransaction(id);
      if (out.json) return out.data(result);
      const { checks, ...rest } = result;
      out.line(fields(rest));
      if (checks?.length) {
        out.line();
        out.line(table(['#', 'AT', 'ANSWER', 'HTTP', 'LATENCY', 'ERROR'], checks.map((c) => [c.checkCount, c.at, c.status, c.httpStatus, `${c.latencyMs}ms`, c.error])));
      }
    });

  return program;
}

// ── errors → messages and exit codes ────────────────────────────────────

function printApiError(error: SluiceApiError, lines?: number[]) {
  process.stderr.write(`${error.code}: ${error.detail}\n`);
  for (const issue of error.errors ?? []) {
    const entry = lines ? /^entries\/(\d+)(?:\/(.*))?$/.exec(issue.path) : null;
    const where = entry ? `line ${lines?.[Number(entry[1])] ?? '?'}${entry[2] ? ` ${entry[2]}` : ''}` : issue.path || '(body)';
    process.stderr.write(`  - ${where}: ${issue.message}\n`);
  }
  if (error.status === 401) process.stderr.write('Pass the server\'s token with --token or SLUICE_API_TOKEN.\n');
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (caught) {
    let error = caught;
    let lines: number[] | undefined;
    if (error instanceof BulkStoppedError) {
      process.stderr.write(`${error.message}\n`);
      lines = error.lines;
      error = error.cause;
    }
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2; // commander already printed it
    if (error instanceof UsageError || error instanceof SluiceConfigurationError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof SluiceApiError) {
      printApiError(error, lines);
      return 1;
    }
    if (error instanceof SluiceConnectionError) {
      process.stderr.write(
        `Cannot reach Sluice at ${error.endpoint} (${error.reason}).\n` +
          `Is it running? Start it with \`npm start\`, or point --endpoint / SLUICE_ENDPOINT at your deployment.\n`,
      );
      return 3;
    }
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
