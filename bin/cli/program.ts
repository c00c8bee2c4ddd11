/**
 * The `sluice` program: the global options, the commands by noun (`commands/`), and one run of it.
 *
 * Exit codes: 0 ok, 1 the API answered an error (or some entries failed),
 * 2 usage error (bad arguments or configuration), 3 the endpoint is unreachable.
 */
import { Command, Option } from 'commander';
import { addConsoleCommand } from './commands/console.js';
import { addDeliveryCommands } from './commands/deliveries.js';
import { addGroupCommands } from './commands/groups.js';
import { addRedriveCommand } from './commands/redrive.js';
import { addMessageCommands } from './commands/messages.js';
import { addProducerCommands } from './commands/producers.js';
import { addSendCommand } from './commands/send.js';
import { addTopicCommands } from './commands/topics.js';
import { addTransactionCommands } from './commands/transactions.js';
import { reportFailure } from './errors.js';
import { integer } from './parsers.js';

const DEFAULT_ENDPOINT = 'http://127.0.0.1:3000';

export function buildProgram(): Command {
  const program = new Command('sluice')
    .description('Command line for Sluice, the serverless message queue.')
    .version('0.1.0')
    .addOption(new Option('--endpoint <url>', 'Sluice base URL').env('SLUICE_ENDPOINT').default(DEFAULT_ENDPOINT))
    .addOption(new Option('--receive-endpoint <url>', "where receives go: a deployed stack's ReceiveUrl (default: --endpoint)").env('SLUICE_RECEIVE_ENDPOINT'))
    .addOption(new Option('--token <token>', 'bearer token of the local runtime').env('SLUICE_API_TOKEN'))
    .addOption(new Option('--auth <mode>', 'authentication').choices(['auto', 'bearer', 'sigv4', 'none']).default('auto'))
    .addOption(new Option('--region <region>', 'AWS region for SigV4 (default: from the endpoint)').env('AWS_REGION'))
    .addOption(new Option('--timeout <seconds>', 'how long one request may take before it is retried or given up').env('SLUICE_TIMEOUT').argParser(integer('--timeout', 1, 900)).default(10))
    .option('--json', 'print JSON instead of tables')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  // In this order: it is the order of `sluice --help`.
  addTopicCommands(program);
  addGroupCommands(program);
  addRedriveCommand(program);
  addProducerCommands(program);
  addSendCommand(program);
  addDeliveryCommands(program);
  addMessageCommands(program);
  addTransactionCommands(program);
  addConsoleCommand(program);
  return program;
}

/** Runs `sluice` with `argv` (as `process.argv`: node, script, arguments); answers the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    return reportFailure(error);
  }
}
