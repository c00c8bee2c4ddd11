/**
 * What a group's redrive reads and writes (docs/design.md, Redrive):
 *
 *   dead-letter links not yet redriven, on gsi1: g1pk "Q#<group>", g1sk "<13-digit dead-lettered ms>#<copy id>"
 *     (the link items of markers.ts; the dead-letter transaction writes these two attributes)
 *   a redriven link: REMOVE g1pk, g1sk SET r = seq in the redrive stream, ra = when
 *     IF g1pk = "Q#<group>" AND m = :copy   — so no dead letter comes back twice
 *   group item: rd = until when the redrive stream may hold deliverable messages (receive's hint),
 *               rv = messages redriven (the group's `deadLettered` figure subtracts it)
 */
import { QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetPages, call, conditional } from './call.js';
import { GROUP_PK, padMs, redriveIndexPk } from './keys.js';
import { GSI1 } from './table.js';
import type { TransactItem } from './write-batch.js';

/** A dead letter a group may redrive: the link item's key and the copy it names. */
export interface RedriveLink {
  /** The link's table key (`D#<topic>#<messageId>` / group). */
  key: { pk: string; sk: string };
  /** The dead-letter topic and the copy's id there. */
  copyTopic: string;
  copyMessageId: string;
}

export class RedriveStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Up to `limit` keys of the group's dead-letter links not yet redriven, oldest dead letter
   * first, from those dead-lettered at or after `from` (ms; the group's creation: a group created
   * again under the name does not inherit the dead letters of the one before). Eventually
   * consistent (gsi1): a link redriven a moment ago may still be listed, and the redrive's
   * condition on it then fails.
   */
  async pendingKeys(group: string, from: number, limit: number): Promise<Array<{ pk: string; sk: string }>> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: 'g1pk = :pk AND g1sk >= :from',
          ExpressionAttributeValues: { ':pk': redriveIndexPk(group), ':from': padMs(from) },
          Limit: limit,
        }),
      ),
    );
    return (Items ?? []).map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
  }

  /** The links of `keys` that are still waiting for a redrive of `group` (strongly consistent), in the order given. */
  async pendingLinks(group: string, keys: Array<{ pk: string; sk: string }>): Promise<RedriveLink[]> {
    const found = new Map<string, RedriveLink>();
    for await (const items of batchGetPages(this.doc, this.table, keys, { consistent: true })) {
      for (const item of items) {
        if (item.g1pk !== redriveIndexPk(group)) continue;
        found.set(`${String(item.pk)}\u0000${String(item.sk)}`, {
          key: { pk: String(item.pk), sk: String(item.sk) },
          copyTopic: String(item.t),
          copyMessageId: String(item.m),
        });
      }
    }
    return keys.flatMap((key) => found.get(`${key.pk}\u0000${key.sk}`) ?? []);
  }

  /** Marks a link redriven to `seq` of the group's redrive stream, if it still waits with the same copy. */
  redrivenItem(group: string, link: RedriveLink, seq: number, now: number): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: link.key,
        UpdateExpression: 'REMOVE g1pk, g1sk SET r = :seq, ra = :now',
        ConditionExpression: 'g1pk = :q AND m = :m',
        ExpressionAttributeValues: { ':q': redriveIndexPk(group), ':m': link.copyMessageId, ':seq': seq, ':now': now },
      },
    };
  }

  /**
   * Takes a link out of the group's redrive index without redriving it: its copy is gone
   * (expired, or its dead-letter topic deleted). False when it no longer waited.
   */
  async drop(group: string, link: RedriveLink): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: link.key,
          UpdateExpression: 'REMOVE g1pk, g1sk',
          ConditionExpression: 'g1pk = :q AND m = :m',
          ExpressionAttributeValues: { ':q': redriveIndexPk(group), ':m': link.copyMessageId },
        }),
      ),
    );
  }

  /** Counts `n` messages redriven on the live group item, in the redrive's transaction (fails if the group was deleted). */
  countItem(group: string, n: number): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: { pk: GROUP_PK, sk: group },
        UpdateExpression: 'ADD rv :n',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted)',
        ExpressionAttributeValues: { ':n': n },
      },
    };
  }

  /**
   * Raises the group's hint that its redrive stream may hold deliverable messages until `until`
   * (never lowers it). Written before the redrive appends, so receive never misses what it appends.
   * False when the group is gone or the hint was already as late.
   */
  async raiseHint(group: string, until: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: GROUP_PK, sk: group },
          UpdateExpression: 'SET rd = :until',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted) AND (attribute_not_exists(rd) OR rd < :until)',
          ExpressionAttributeValues: { ':until': until },
        }),
      ),
    );
  }
}
