/** `sluice receive|commit|visibility|tail`: a consumer group's deliveries — lease, print, commit, extend or release. */
import type { Command } from 'commander';
import type { CommitEntryResult, Delivered } from '../../../lib/client/types.js';
import { interruptSignal, withContext } from '../context.js';
import { deliveredLines } from '../output.js';
import { collect, integer } from '../parsers.js';

export function addDeliveryCommands(program: Command): void {
  program
    .command('receive <group>')
    .description('lease messages of a group and print them with their receipt handles')
    .option('--max <n>', 'messages at most', integer('--max', 1, 100), 10)
    .option('--wait <seconds>', 'long-poll up to this long', integer('--wait', 0, 20), 0)
    .option('--visibility <seconds>', 'lease length (default: the group\'s)', integer('--visibility', 0, 43_200))
    .option('--topic <topic>', 'only from this topic (repeatable)', collect)
    .action(withContext(async ({ client, out }, group: string, options: { max: number; wait: number; visibility?: number; topic?: string[] }) => {
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
      out.print({ messages }, () => (messages.length === 0 ? 'No messages.' : messages.map(deliveredLines)));
    }));

  program
    .command('commit <group> <receiptHandle...>')
    .description('commit received messages by their receipt handles')
    .action(withContext(async ({ client, out }, group: string, handles: string[]) => {
      const { results } = await client.commit(group, handles);
      out.print({ results }, () => results.map((r) => ('error' in r ? `${r.receiptHandle}  ${r.error.code}: ${r.error.detail}` : `${r.receiptHandle}  ${r.status}`)));
      if (results.some((r) => 'error' in r)) process.exitCode = 1;
    }));

  program
    .command('visibility <group> <receiptHandle>')
    .description('extend a lease to --seconds from now, or release it with --seconds 0 (redelivered at once)')
    .requiredOption('--seconds <n>', 'new visibility timeout from now (0 releases)', integer('--seconds', 0, 43_200))
    .action(withContext(async ({ client, out }, group: string, receiptHandle: string, options: { seconds: number }) => {
      await client.changeVisibility(group, receiptHandle, options.seconds);
      out.print({ receiptHandle, visibilityTimeoutSeconds: options.seconds }, () =>
        options.seconds === 0 ? 'Released: the message is delivered again.' : `Lease extended by ${options.seconds}s from now.`,
      );
    }));

  program
    .command('tail <group>')
    .description('receive, print and commit messages until Ctrl-C')
    .option('--no-commit', 'print without committing (each message stays leased until its visibility timeout)')
    .option('--max <n>', 'messages per receive', integer('--max', 1, 100), 10)
    .option('--wait <seconds>', 'long-poll wait per receive', integer('--wait', 1, 20), 20)
    .option('--visibility <seconds>', 'lease length', integer('--visibility', 1, 43_200))
    .option('--limit <n>', 'stop after this many messages', integer('--limit', 1, Number.MAX_SAFE_INTEGER))
    .action(withContext(async ({ client, out }, group: string, options: { commit: boolean; max: number; wait: number; visibility?: number; limit?: number }) => {
      const signal = interruptSignal();
      const seen = new Set<string>();
      let printed = 0;
      const reportCommits = (results: CommitEntryResult[]) => {
        for (const r of results) {
          if (!('error' in r)) continue;
          process.stderr.write(`commit ${r.receiptHandle}: ${r.error.code}: ${r.error.detail}\n`);
          // As `sluice commit`: 1 when some entries failed (the message was not committed: it comes back).
          process.exitCode = 1;
        }
      };
      // Each batch's commits ride on the next receive (folded into its claim on the server); the
      // last batch's, and those of a receive that did not answer, are committed on their own at the end.
      let carry: string[] = [];
      try {
        while (!signal.aborted && (options.limit === undefined || printed < options.limit)) {
          let messages: Delivered[];
          try {
            const got = await client.receiveAndCommit(
              group,
              carry,
              {
                maxMessages: options.limit === undefined ? options.max : Math.min(options.max, options.limit - printed),
                waitSeconds: options.wait,
                ...(options.visibility !== undefined ? { visibilityTimeoutSeconds: options.visibility } : {}),
              },
              { signal },
            );
            carry = [];
            reportCommits(got.commitResults);
            messages = got.messages;
          } catch (error) {
            if (signal.aborted) break;
            throw error;
          }
          // Without commits a message comes back once its lease ends: print it once.
          const fresh = options.commit ? messages : messages.filter((m) => !seen.has(`${m.topic}/${m.messageId}`));
          for (const m of fresh) {
            seen.add(`${m.topic}/${m.messageId}`);
            out.record(m, (delivered) => `${deliveredLines(delivered)}\n`);
            printed++;
          }
          if (options.commit) carry = messages.map((m) => m.receiptHandle);
        }
      } finally {
        // Commits are idempotent: a carried commit the interrupted receive already wrote is answered committed again.
        if (carry.length > 0) reportCommits((await client.commit(group, carry)).results);
      }
    }));
}
