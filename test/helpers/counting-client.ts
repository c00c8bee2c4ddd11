/**
 * A document client that counts the commands sent through it, by command name (the stream-log
 * tests: which calls an append made). Everything else is the wrapped client's.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export function countingClient(doc: DynamoDBDocumentClient) {
  const counts = new Map<string, number>();
  const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  const wrapped = Object.create(doc) as DynamoDBDocumentClient;
  wrapped.send = ((command: { constructor: { name: string } }) => {
    counts.set(command.constructor.name, (counts.get(command.constructor.name) ?? 0) + 1);
    return send(command);
  }) as DynamoDBDocumentClient['send'];
  return { doc: wrapped, counts, reset: () => counts.clear() };
}
