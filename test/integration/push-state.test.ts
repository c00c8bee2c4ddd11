/**
 * The push-state item's attempts ring (lib/adapters/dynamodb/push-state.ts) on DynamoDB Local:
 * written without reading, each list bounded by construction, the newest attempts answered.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PushStateStore, pushStateKey, type PushAttempt } from '../../lib/adapters/dynamodb/push-state.js';
import { PushLimits } from '../../lib/domain/push.js';
import { testTable } from '../helpers/stores.js';

const KEPT = PushLimits.lastAttemptsKept;
let t: Awaited<ReturnType<typeof testTable>>;
let store: PushStateStore;
let commands: string[];

const attempt = (at: number, error: string | null = null): PushAttempt => ({ at, status: error ? 500 : 204, latencyMs: 3, error, messages: 1, retried: error ? 1 : 0 });
const raw = async () => (await t.doc.send(new GetCommand({ TableName: t.table, Key: pushStateKey('hooks') }))).Item as { la?: PushAttempt[]; lb?: PushAttempt[] };

beforeEach(async () => {
  t = await testTable('push-state');
  store = new PushStateStore(t.doc, t.table);
  commands = [];
  t.doc.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      commands.push(context.commandName ?? '?');
      return next(args);
    }) as never,
    { step: 'initialize', name: 'push-state-counter' },
  );
});

describe('push attempts ring', () => {
  it('records a round with one UpdateItem and no read', async () => {
    await store.record('hooks', [attempt(1), attempt(3), attempt(2)]);
    expect(commands).toEqual(['UpdateItemCommand']);
    expect((await raw()).la?.map((a) => a.at)).toEqual([3, 2, 1]);
    expect((await store.lastAttempts('hooks')).map((a) => a.at)).toEqual([3, 2, 1]);
  });

  it('at the bound: la full → the next round moves it to lb (two updates, no read); each list stays ≤ the ring size', async () => {
    // Fill la to exactly the bound: 10 rounds of one attempt each, one UpdateItem each.
    for (let i = 1; i <= KEPT; i++) await store.record('hooks', [attempt(i)]);
    expect(commands).toEqual(Array(KEPT).fill('UpdateItemCommand'));
    expect((await raw()).la).toHaveLength(KEPT);
    expect((await raw()).lb).toBeUndefined();

    // One more: la has no room, so the conditional prepend fails and the rotation moves la whole to lb.
    commands = [];
    await store.record('hooks', [attempt(KEPT + 1)]);
    expect(commands).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
    const rotated = await raw();
    expect(rotated.la?.map((a) => a.at)).toEqual([KEPT + 1]);
    expect(rotated.lb?.map((a) => a.at)).toEqual(Array.from({ length: KEPT }, (_, i) => KEPT - i));
    expect((await store.lastAttempts('hooks')).map((a) => a.at)).toEqual(Array.from({ length: KEPT }, (_, i) => KEPT + 1 - i));

    // Many rounds of mixed sizes (up to more than the ring): never more than KEPT per list, newest KEPT answered.
    let at = KEPT + 1;
    for (const size of [3, 7, 1, 12, 4, 10, 2, 9, 5, 6]) {
      commands = [];
      await store.record('hooks', Array.from({ length: size }, () => attempt(++at)));
      expect(commands.length === 1 || commands.length === 2).toBe(true);
      expect(commands.every((c) => c === 'UpdateItemCommand')).toBe(true);
      const item = await raw();
      expect(item.la!.length).toBeLessThanOrEqual(KEPT);
      expect((item.lb ?? []).length).toBeLessThanOrEqual(KEPT);
      expect((await store.lastAttempts('hooks')).map((a) => a.at)).toEqual(Array.from({ length: KEPT }, (_, i) => at - i));
    }
  });

  it('cuts long errors so the item stays small', async () => {
    await store.record('hooks', [attempt(1, 'x'.repeat(5000))]);
    expect((await raw()).la?.[0]?.error).toHaveLength(200);
  });
});
