/**
 * Counts the write commands a document client sends and the write units DynamoDB Local reports
 * for the ready index (gsi1) with each: what a test of index churn asserts on.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GSI1 } from '../../lib/adapters/dynamodb/table.js';

const WRITE = /^(Update|Put|Delete|TransactWrite|BatchWrite)/;

/** Calls `onWrite` after each write command `doc` sends, with its name and its gsi1 write units. */
export function countWrites(doc: DynamoDBDocumentClient, onWrite: (command: string, indexUnits: number) => void): void {
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      if (!WRITE.test(command)) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
      const result = await next(args);
      const output = result.output as { ConsumedCapacity?: unknown };
      const list = (Array.isArray(output.ConsumedCapacity) ? output.ConsumedCapacity : [output.ConsumedCapacity]) as Array<
        { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> } | undefined
      >;
      onWrite(command, list.reduce((sum, c) => sum + (c?.GlobalSecondaryIndexes?.[GSI1]?.CapacityUnits ?? 0), 0));
      return result;
    },
    { step: 'initialize', name: 'countWrites' },
  );
}
