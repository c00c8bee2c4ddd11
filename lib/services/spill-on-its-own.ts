/**
 * A spill in a write of its own (docs/design.md, Range claims, "Who spills"; History for the whole
 * retention): the completions `planSpill` takes from the cursor as read go to history items, then
 * leave `dn` conditional on the mark and seek epoch as read (not on `nx`, which grants move). Made by
 * the range commit that crosses a step and by a grant past GRANT_SPILLS_AT. Nothing when nothing is due.
 */
import type { CursorState } from '../domain/cursor.js';
import { historyTtl, type Spill } from '../domain/history.js';
import { completionKeys } from '../adapters/dynamodb/cursor-item.js';
import type { Stores } from './stores.js';

export async function spillOnItsOwn(stores: Stores, group: string, stream: string, cursor: CursorState, spill: Spill | undefined, now: number): Promise<void> {
  if (spill === undefined) return;
  const spilled = await stores.history.write(group, stream, cursor.createdAt ?? 0, cursor.done, spill, historyTtl(now));
  await stores.cursors.spill(group, stream, { ...spilled, remove: completionKeys(cursor, spilled.remove) }, cursor.seekEpoch, now);
}
