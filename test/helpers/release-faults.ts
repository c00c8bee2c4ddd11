/**
 * Fault points of the claimed append for tests of topic `jobs` (docs/design.md,
 * Scheduled and delayed messages: Release; Transactional messages: Commit): which
 * DynamoDB call is a segment put, a release's or a commit's claim or mark, and a
 * crash injected at the first such call.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const throttled = () => Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ProvisionedThroughputExceededException', $metadata: {} });

/** Is this call a put of a message segment of topic `jobs` (alone, or with its sentinel)? */
export const isSegmentPut = (command: string, input: unknown) =>
  ['PutItemCommand', 'TransactWriteItemsCommand'].includes(command) && JSON.stringify(input).includes('"S#t:jobs/p:');
/** Is this call the release's mark (`st = released`)? */
export const isMark = (command: string, input: unknown) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET st = :released, a = :a REMOVE');
/** Is this call a release claim? */
export const isClaim = (command: string, input: unknown) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET st = :releasing');

/** Is this call a half message's commit claim (`st = committing`)? */
export const isCommitClaim = (command: string, input: unknown) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET st = :committing');
/** Is this call a claimed commit's mark (`st = committed`, outside a transaction)? */
export const isCommitMark = (command: string, input: unknown) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET st = :committed');

/** Fails the first call `matches` picks as a crash would end the release there (the error stops the whole call). */
export function crashAt(client: DynamoDBClient, matches: (command: string, input: unknown) => boolean): { hit: () => boolean } {
  let hit = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!hit && matches(String(context.commandName), args.input)) {
        hit = true;
        throw throttled();
      }
      return next(args);
    },
    { step: 'initialize', name: `crash-${Math.random()}` },
  );
  return { hit: () => hit };
}

/**
 * Holds the first call `matches` picks (e.g. the segment put, after the claim and the give-up
 * check) until `release()`: `reached` resolves when it is held — a claimant stalled mid-protocol.
 */
export function stallAt(client: DynamoDBClient, matches: (command: string, input: unknown) => boolean): { reached: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  let stalled: () => void = () => {};
  const reached = new Promise<void>((resolve) => (stalled = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let once = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!once && matches(String(context.commandName), args.input)) {
        once = true;
        stalled();
        await gate;
      }
      return next(args);
    },
    { step: 'initialize', name: `stall-${Math.random()}` },
  );
  return { reached, release: () => release() };
}
