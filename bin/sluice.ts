/**
 * `sluice`: the Sluice command line, on the client SDK. The program is assembled in `cli/program.ts`.
 *
 * Exit codes: 0 ok, 1 the API answered an error (or some entries failed),
 * 2 usage error (bad arguments or configuration), 3 the endpoint is unreachable.
 */
import { main } from './cli/program.js';

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // `sluice topics list | head`: the reader went away; that is not a failure.
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const code = await main(process.argv);
// Exit once stdout is flushed, without waiting for idle keep-alive connections to time out.
process.stdout.write('', () => process.exit(code));
