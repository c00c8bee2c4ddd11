/** `sluice topics list|get|put (create)|update|delete|purge`. */
import { Option, type Command } from 'commander';
import type { Topic } from '../../../lib/client/types.js';
import { gather, withContext } from '../context.js';
import { UsageError } from '../errors.js';
import { fields, listing } from '../output.js';
import { integer } from '../parsers.js';

const COLUMNS = ['NAME', 'TYPE', 'PARTITIONS', 'RETENTION', 'MAX-DELAY', 'ORDER-GROUP', 'CREATED'];
const row = (t: Topic) => [t.name, t.type, String(t.partitions), `${t.retentionSeconds}s`, `${t.maxDelaySeconds}s`, t.orderGroup, t.createdAt];

export function addTopicCommands(program: Command): void {
  // Subcommands inherit exitOverride and output settings from their parent when created through .command().
  const topics = program.command('topics').description('manage topics');
  topics
    .command('list')
    .description('list topics')
    .action(withContext(async ({ client, out }) => {
      const all = await gather(client.iterateTopics());
      out.print({ topics: all }, () => listing(all, 'No topics.', COLUMNS, row));
    }));
  topics
    .command('get <topic>')
    .description('show a topic with its message count and subscribers')
    .action(withContext(async ({ client, out }, name: string) => out.print(await client.getTopic(name), fields)));
  topics
    .command('put <topic>')
    .alias('create')
    .description('create or update a topic')
    .addOption(new Option('--type <type>', 'topic type').choices(['standard', 'fifo']).default('standard'))
    .option('--retention <seconds>', 'retention (300-1209600)', integer('--retention', 300, 1_209_600))
    .option('--max-delay <seconds>', 'furthest scheduled delivery allowed', integer('--max-delay', 0, 1_209_600))
    .option('--order-group <name>', 'time-order group (fifo topics)')
    .option('--partitions <n>', 'standard topics: partitions (1-256, default 4; only ever raised)', integer('--partitions', 1, 256))
    .option('--sequenced', 'fifo topics outside an order group: shard sequence numbers from a counter (set at creation, fixed after)')
    .action(withContext(async ({ client, out }, name: string, options: { type: 'standard' | 'fifo'; retention?: number; maxDelay?: number; orderGroup?: string; partitions?: number; sequenced?: boolean }) => {
      const topic = await client.putTopic(name, {
        type: options.type,
        ...(options.partitions !== undefined ? { partitions: options.partitions } : {}),
        ...(options.retention !== undefined ? { retentionSeconds: options.retention } : {}),
        ...(options.maxDelay !== undefined ? { maxDelaySeconds: options.maxDelay } : {}),
        ...(options.orderGroup ? { orderGroup: options.orderGroup } : {}),
        ...(options.sequenced ? { sequenced: true } : {}),
      });
      out.print(topic, (t) => `Topic ${t.name} (${t.type}) is ready.`);
    }));
  topics
    .command('update <topic>')
    .description('change only the settings given (PATCH); type, order group and sequenced never change')
    .option('--retention <seconds>', 'retention (300-1209600)', integer('--retention', 300, 1_209_600))
    .option('--max-delay <seconds>', 'furthest scheduled delivery allowed', integer('--max-delay', 0, 1_209_600))
    .option('--partitions <n>', 'raise the partitions of a standard topic (up to 256; never lowered)', integer('--partitions', 1, 256))
    .action(withContext(async ({ client, out }, name: string, options: { retention?: number; maxDelay?: number; partitions?: number }) => {
      const topic = await client.patchTopic(name, {
        ...(options.partitions !== undefined ? { partitions: options.partitions } : {}),
        ...(options.retention !== undefined ? { retentionSeconds: options.retention } : {}),
        ...(options.maxDelay !== undefined ? { maxDelaySeconds: options.maxDelay } : {}),
      });
      out.print(topic, fields);
    }));
  topics
    .command('purge <topic>')
    .description('drop every deliverable and scheduled message of a topic, for every group (half messages stay)')
    .option('--yes', 'confirm: the messages cannot be brought back')
    .action(withContext(async ({ client, out }, name: string, options: { yes?: boolean }) => {
      if (!options.yes) throw new UsageError(`Purging drops every waiting message of '${name}' for every group; add --yes to confirm.`);
      const result = await client.purgeTopic(name);
      out.print(result, (r) => `Purged topic ${r.topic} (everything deliverable up to ${r.purgedAt}).`);
    }));
  topics
    .command('delete <topic>')
    .description('delete a topic and its messages')
    .action(withContext(async ({ client, out }, name: string) => {
      await client.deleteTopic(name);
      out.print({ deleted: name }, () => `Deleted topic ${name}.`);
    }));
}
