/**
 * A DynamoDB client stand-in whose one middleware is the bench meter's (bench/meter.ts): `send`
 * runs it around a fake DynamoDB answer (or a thrown error), so unit tests see what the meter
 * counts for a command without a table.
 */
import { Meter } from '../../bench/meter.js';

export function metered() {
  const meter = new Meter();
  let middleware: ((next: (args: unknown) => Promise<unknown>, context: { commandName: string }) => (args: { input: Record<string, unknown> }) => Promise<unknown>) | undefined;
  meter.instrumentDynamo({ middlewareStack: { add: (m: typeof middleware) => (middleware = m) } });
  const send = (commandName: string, input: Record<string, unknown>, answer: () => Record<string, unknown>) =>
    meter.als.run({ tag: 't', route: 'r' }, () => middleware!(async () => ({ output: answer() }), { commandName })({ input }));
  return { meter, send };
}
