/**
 * What the timer tests watch of a DynamoDB client: index queries (the release
 * must not read the due index) and transactions with their failures (wake-ups
 * of one second must not race). Counts only while `recording` is true.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface CallRecorder {
  recording: boolean;
  /** `<command> <index>` of each index query. */
  indexQueries: string[];
  transactions: { sent: number; failed: number };
  reset(): void;
}

export function recordCalls(client: DynamoDBClient): CallRecorder {
  const recorder: CallRecorder = {
    recording: false,
    indexQueries: [],
    transactions: { sent: 0, failed: 0 },
    reset() {
      recorder.recording = false;
      recorder.indexQueries = [];
      recorder.transactions = { sent: 0, failed: 0 };
    },
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!recorder.recording) return next(args);
      const input = args.input as { IndexName?: string };
      if (input.IndexName !== undefined) recorder.indexQueries.push(`${context.commandName} ${input.IndexName}`);
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      recorder.transactions.sent++;
      try {
        return await next(args);
      } catch (error) {
        recorder.transactions.failed++;
        throw error;
      }
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  return recorder;
}
