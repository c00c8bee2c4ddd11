import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { isConditionalFailure, translateDynamoError } from './errors.js';

/** Runs one store call and turns unabsorbed AWS failures into retryable domain errors. */
export async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateDynamoError(error);
  }
}

/**
 * Runs one conditional write: true when it took effect, false when its
 * condition failed (someone else got there first); other failures as {@link call}.
 */
export async function conditional(operation: () => Promise<unknown>): Promise<boolean> {
  try {
    await call(operation);
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** Every item a Query matches, page after page (admin and timer paths only: it reads the whole collection). */
export async function queryAll(doc: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const result = await call(() => doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start })));
    out.push(...(result.Items ?? []));
    start = result.LastEvaluatedKey;
  } while (start !== undefined);
  return out;
}
