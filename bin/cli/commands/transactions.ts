/** `sluice tx commit|rollback|get`: resolve or inspect a transaction (a half message). */
import type { Command } from 'commander';
import { withContext } from '../context.js';
import { fields, table } from '../output.js';

export function addTransactionCommands(program: Command): void {
  const tx = program.command('tx').description('resolve or inspect transactions (half messages)');
  tx.command('commit <transactionId>')
    .description('commit: the half message becomes deliverable')
    .action(withContext(async ({ client, out }, id: string) => {
      out.print(
        await client.commitTransaction(id),
        (result) => `${id} ${result.state}${result.messageId ? `: message ${result.messageId}` : ''}${result.sequence !== undefined ? ` (sequence ${result.sequence})` : ''}.`,
      );
    }));
  tx.command('rollback <transactionId>')
    .description('roll back: the half message is never delivered')
    .action(withContext(async ({ client, out }, id: string) => out.print(await client.rollbackTransaction(id), (result) => `${id} ${result.state}.`)));
  tx.command('get <transactionId>')
    .description('a transaction\'s state and the checks made')
    .action(withContext(async ({ client, out }, id: string) => {
      out.print(await client.getTransaction(id), ({ checks, ...rest }) => {
        const text = [fields(rest)];
        if (checks?.length) {
          text.push('', table(['#', 'AT', 'ANSWER', 'HTTP', 'LATENCY', 'ERROR'], checks.map((c) => [c.checkCount, c.at, c.status, c.httpStatus, `${c.latencyMs}ms`, c.error])));
        }
        return text;
      });
    }));
}
