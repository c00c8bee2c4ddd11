/**
 * Bounds of the doorbell park entries (docs/design.md, "Waking SDK consumers"
 * and Limits by construction).
 */
export const DoorbellLimits = {
  /**
   * Pull groups one topic item can hold in its `wb` map (group → park end).
   * DynamoDB counts an item by all its bytes: an entry is a name of at most
   * 128 ASCII characters (NAME_PATTERN) plus a number of at most 21 bytes and
   * 1 byte of map overhead, so 1,000 entries are ≤ 150,000 bytes. Next to the
   * ≤ 131 KB of the rest of a topic item (`pg` with
   * `PushLimits.pushGroupsPerTopicMax` push group names, lib/domain/push.ts)
   * the item stays ≤ ~281 KB, under the 400 KB item limit with room to spare.
   * A park the full map refuses is a failed park: the receive long-polls
   * without a doorbell. Delete-group removes the group's entries.
   */
  parkedGroupsPerTopicMax: 1000,
} as const;

/**
 * A doorbell park that could not be written (the topic's `wb` map is full, or
 * concurrent parks kept winning). Internal: the parking receive logs it and
 * long-polls without a doorbell; it never reaches a client.
 */
export class DoorbellParkRefusedError extends Error {
  constructor(
    readonly topic: string,
    readonly group: string,
    readonly reason: 'full' | 'contended',
  ) {
    super(`Doorbell park of group '${group}' on topic '${topic}' refused (${reason}).`);
    this.name = 'DoorbellParkRefusedError';
  }
}
