/** `sluice groups redrive <group> [--max N]`: a group's dead letters come back to it (docs/design.md, Redrive). */
import type { Command } from 'commander';
import { withContext } from '../context.js';
import { integer } from '../parsers.js';

/** Adds `redrive` to the `groups` command (addGroupCommands must have run). */
export function addRedriveCommand(program: Command): void {
  const groups = program.commands.find((c) => c.name() === 'groups');
  if (!groups) throw new Error('addRedriveCommand needs the groups command');
  groups
    .command('redrive <group>')
    .description("bring the messages this group dead-lettered back to it (same ids, deliveryCount from 1); calls again while more remain, up to --max in all")
    .option('--max <n>', 'most messages to bring back (default: all)', integer('--max', 1, 1_000_000))
    .action(withContext(async ({ client, out }, name: string, options: { max?: number }) => {
      let redriven = 0;
      for (;;) {
        const left = options.max === undefined ? undefined : options.max - redriven;
        if (left !== undefined && left <= 0) break;
        const result = await client.redrive(name, left === undefined ? {} : { maxMessages: Math.min(1000, left) });
        redriven += result.redriven;
        if (!result.more) break;
      }
      out.print({ group: name, redriven }, () => `Redrove ${redriven} message${redriven === 1 ? '' : 's'} back to group ${name}.`);
    }));
}
