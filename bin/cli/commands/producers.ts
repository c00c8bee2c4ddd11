/** `sluice producers list|put (create)|get|delete|rotate-secret`: producer groups, the transaction checkers. */
import { Option, type Command } from 'commander';
import type { OnMaxChecks, Producer } from '../../../lib/client/types.js';
import { gather, withContext } from '../context.js';
import { fields, listing } from '../output.js';
import { integer } from '../parsers.js';

const producerFields = (producer: Producer) => fields({ ...producer });
const COLUMNS = ['NAME', 'CHECKER-URL', 'INTERVAL', 'MAX-CHECKS', 'ON-MAX-CHECKS'];
const row = (p: Producer) => [p.name, p.checkerUrl, `${p.checkIntervalSeconds}s`, p.maxChecks, p.onMaxChecks];

export function addProducerCommands(program: Command): void {
  const producers = program.command('producers').description('manage producer groups (transaction checkers)');
  producers
    .command('list')
    .description('list producer groups')
    .action(withContext(async ({ client, out }) => {
      const all = await gather(client.iterateProducers());
      out.print({ producers: all }, () => listing(all, 'No producer groups.', COLUMNS, row));
    }));
  producers
    .command('put <producerGroup>')
    .alias('create')
    .description('create or update a producer group; prints the signing secret on creation')
    .requiredOption('--checker-url <url>', 'where Sluice sends transaction.check webhooks')
    .option('--check-interval <seconds>', 'seconds between checks', integer('--check-interval', 1, 3600))
    .option('--max-checks <n>', 'checks before --on-max-checks applies', integer('--max-checks', 1, 1000))
    .addOption(new Option('--on-max-checks <action>', 'what to do after the last check').choices(['rollback', 'commit', 'keep']))
    .action(withContext(async ({ client, out }, name: string, options: { checkerUrl: string; checkInterval?: number; maxChecks?: number; onMaxChecks?: OnMaxChecks }) => {
      const producer = await client.putProducer(name, {
        checkerUrl: options.checkerUrl,
        ...(options.checkInterval !== undefined ? { checkIntervalSeconds: options.checkInterval } : {}),
        ...(options.maxChecks !== undefined ? { maxChecks: options.maxChecks } : {}),
        ...(options.onMaxChecks ? { onMaxChecks: options.onMaxChecks } : {}),
      });
      out.print(producer, producerFields);
    }));
  producers
    .command('get <producerGroup>')
    .description('show a producer group')
    .action(withContext(async ({ client, out }, name: string) => out.print(await client.getProducer(name), producerFields)));
  producers
    .command('delete <producerGroup>')
    .description('delete a producer group (refused while it has unresolved half messages)')
    .action(withContext(async ({ client, out }, name: string) => {
      await client.deleteProducer(name);
      out.print({ deleted: name }, () => `Deleted producer group ${name}.`);
    }));
  producers
    .command('rotate-secret <producerGroup>')
    .description('issue a new checker signing secret')
    .action(withContext(async ({ client, out }, name: string) => out.print(await client.rotateProducerSecret(name), producerFields)));
}
