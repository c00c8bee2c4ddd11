/** `sluice message get|find|cancel`: look messages up, cancel a scheduled one. */
import type { Command } from 'commander';
import { withContext } from '../context.js';
import { bodyPreview, fields, table } from '../output.js';
import { integer } from '../parsers.js';

export function addMessageCommands(program: Command): void {
  const message = program.command('message').description('look messages up');
  message
    .command('get <topic> <messageId>')
    .description('a message, its state, and its delivery state per group')
    .action(withContext(async ({ client, out }, topic: string, id: string) => {
      out.print(await client.getMessage(topic, id), (found) => {
        const { groups: perGroup, ...rest } = found;
        const text = [fields({ ...rest, body: bodyPreview(found, 2000) })];
        if (perGroup.length) text.push('', table(['GROUP', 'STATE', 'DELIVERIES', 'COMMITTED'], perGroup.map((g) => [g.group, g.state, g.deliveryCount, g.committedAt])));
        return text;
      });
    }));
  message
    .command('find <topic>')
    .description('messages carrying a key, newest first')
    .requiredOption('--key <key>', 'the key')
    .option('--limit <n>', 'messages at most', integer('--limit', 1, 100), 20)
    .action(withContext(async ({ client, out }, topic: string, options: { key: string; limit: number }) => {
      out.print(await client.findMessages(topic, options.key, { limit: options.limit }), (page) => {
        if (page.messages.length === 0) return `No message of ${topic} carries the key '${options.key}'.`;
        const text = [table(['MESSAGE', 'STATE', 'SENT', 'BODY'], page.messages.map((m) => [m.messageId, m.state, m.sentAt, bodyPreview(m, 60)]))];
        if (page.nextToken) text.push('(more: narrow the key or raise --limit)');
        return text;
      });
    }));
  message
    .command('cancel <topic> <messageId>')
    .description('cancel a scheduled message')
    .action(withContext(async ({ client, out }, topic: string, id: string) => {
      await client.cancelMessage(topic, id);
      out.print({ cancelled: id }, () => `Cancelled ${id}.`);
    }));
}
