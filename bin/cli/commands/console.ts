/**
 * `sluice console`: the web console for the endpoint in --endpoint, served on loopback by a
 * local server that signs the console's API calls with your credentials (console/proxy.ts).
 */
import type { Command } from 'commander';
import { HttpTransport } from '../../../lib/client/transport.js';
import { connectionOptions, interruptSignal, type GlobalOptions } from '../context.js';
import { integer } from '../parsers.js';

export function addConsoleCommand(program: Command): void {
  program
    .command('console')
    .description('open the web console for --endpoint: a loopback server that signs its calls with your AWS credentials (or --token)')
    .option('--port <port>', 'local port (0: any free one)', integer('--port', 0, 65535), 3100)
    .action(async (options: { port: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const transport = new HttpTransport(connectionOptions(globals));
      // Loaded here, not at start: the other commands start without the console's modules.
      const [{ loadConsoleAssets }, { startConsoleProxy }] = await Promise.all([import('../../../console/assets.js'), import('../../../console/proxy.js')]);
      const proxy = await startConsoleProxy({ transport, assets: await loadConsoleAssets(), port: options.port });
      process.stdout.write(`Sluice console for ${globals.endpoint}: ${proxy.url}/console\nPress Ctrl-C to stop.\n`);
      const signal = interruptSignal();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await proxy.stop();
    });
}
