/**
 * How a `sluice` run that failed ends: a message on stderr and an exit code — 1 the API answered
 * an error, 2 usage error (bad arguments or configuration), 3 the endpoint is unreachable.
 */
import { CommanderError } from 'commander';
import { SluiceApiError, SluiceConfigurationError, SluiceConnectionError } from '../../lib/client/errors.js';
import { BulkStoppedError } from './ndjson.js';

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {}

/** Prints what went wrong and answers the exit code. */
export function reportFailure(caught: unknown): number {
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

/** The problem's code and detail, then each field issue — by input line (`lines`, NDJSON) where the path names an entry. */
function printApiError(error: SluiceApiError, lines?: number[]) {
  process.stderr.write(`${error.code}: ${error.detail}\n`);
  for (const issue of error.errors ?? []) {
    const entry = lines ? /^entries\/(\d+)(?:\/(.*))?$/.exec(issue.path) : null;
    const where = entry ? `line ${lines?.[Number(entry[1])] ?? '?'}${entry[2] ? ` ${entry[2]}` : ''}` : issue.path || '(body)';
    process.stderr.write(`  - ${where}: ${issue.message}\n`);
  }
  if (error.status === 401) process.stderr.write('Pass the server\'s token with --token or SLUICE_API_TOKEN.\n');
}
