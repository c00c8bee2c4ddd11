/**
 * What the timer tests watch of a DynamoDB client: index queries (the release
 * must not read the due index), transactions with their failures, and single
 * writes that failed their condition and stream segments written (wake-ups of
 * one second must not race; the release appends one segment per stream and
 * round). Counts only while `recording` is true.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { attributeText } from './marshalled.js';

export interface CallRecorder {
  recording: boolean;
  /** `<command> <index>` of each index query. */
  indexQueries: string[];
  transactions: { sent: number; failed: number };
  /** PutItem / UpdateItem / DeleteItem calls that failed their condition. */
  failedConditions: number;
  /** Message segments written (PutItem or inside a transaction; not sentinels, not notice streams). */
  segments: number;
  reset(): void;
}

export function recordCalls(client: DynamoDBClient): CallRecorder {
  const recorder: CallRecorder = {
    recording: false,
    indexQueries: [],
    transactions: { sent: 0, failed: 0 },
    failedConditions: 0,
    segments: 0,
    reset() {
      recorder.recording = false;
      recorder.indexQueries = [];
      recorder.transactions = { sent: 0, failed: 0 };
      recorder.failedConditions = 0;
      recorder.segments = 0;
    },
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!recorder.recording) return next(args);
      const input = args.input as { IndexName?: string };
      if (input.IndexName !== undefined) recorder.indexQueries.push(`${context.commandName} ${input.IndexName}`);
      type Item = Record<string, unknown> | undefined;
      const puts: Item[] =
        context.commandName === 'PutItemCommand'
          ? [(args.input as { Item?: Item }).Item]
          : context.commandName === 'TransactWriteItemsCommand'
            ? ((args.input as { TransactItems?: Array<{ Put?: { Item?: Item } }> }).TransactItems ?? []).map((t) => t.Put?.Item)
            : [];
      recorder.segments += puts.filter((item) => attributeText(item?.pk).startsWith('S#') && attributeText(item?.sk) !== '#' && !attributeText(item?.pk).includes('/n:')).length;
      if (context.commandName !== 'TransactWriteItemsCommand') {
        try {
          return await next(args);
        } catch (error) {
          if ((error as { name?: string }).name === 'ConditionalCheckFailedException') recorder.failedConditions++;
          throw error;
        }
      }
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
