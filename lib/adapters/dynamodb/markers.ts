/**
 * Small side items written in the same transaction as a segment:
 *
 *   dedup  pk "U#<topic>#<dedupId>", sk "U"  {r: send result, x: expires (ms), g: the topic's generation, ttl}
 *   key    pk "K#<topic>#<key>", sk "<13-digit deliverableAt>#<messageId>"  {ttl}
 *   dead-letter link  pk "D#<topic>#<messageId>", sk "<group>"  {t: dead-letter topic, m: copy's id, ttl,
 *                     g1pk "Q#<group>", g1sk "<13-digit ms>#<copy id>" until redriven; then r: its seq
 *                     in the group's redrive stream, ra: when (redrives.ts)}
 *          written in the dead-letter transaction: the original's query names its copies, and the
 *          group's redrive finds them on gsi1
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SendResult, Topic } from '../../domain/model.js';
import { call, queryAll } from './call.js';
import { decodePageToken, encodePageToken } from './catalog.js';
import { deadLetterLinkPk, dedupKey, keyIndexPk, keyIndexSk, messageIdOfKeyIndexSk, redriveIndexPk, redriveIndexSk } from './keys.js';
import type { TransactItem } from './write-batch.js';

export class Markers {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Claims a dedup id for `result` in the topic's generation; fails its condition when the id is
   * already claimed in that generation and not expired. A marker of an earlier life of the topic
   * (deleted and created again within the dedup window) is replaced: its message is not in this
   * generation, so a send answered from it would be lost. Markers written before `g` existed count
   * for any generation (as before) until they expire.
   */
  dedupItem(topic: Pick<Topic, 'name' | 'generation'>, dedupId: string, result: SendResult, now: number, windowSeconds: number): TransactItem {
    const expires = now + windowSeconds * 1000;
    return {
      Put: {
        TableName: this.table,
        Item: { ...dedupKey(topic.name, dedupId), r: result, x: expires, g: topic.generation, ttl: Math.ceil(expires / 1000) },
        // `<>` holds against a missing attribute: a marker written before `g` must still be a hit.
        ConditionExpression: 'attribute_not_exists(pk) OR x < :now OR (attribute_exists(g) AND g <> :gen)',
        ExpressionAttributeValues: { ':now': now, ':gen': topic.generation },
      },
    };
  }

  /** The send a dedup id names in the topic's generation, while its window lasts. */
  async dedupResult(topic: Pick<Topic, 'name' | 'generation'>, dedupId: string, now: number): Promise<SendResult | undefined> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: dedupKey(topic.name, dedupId), ConsistentRead: true })),
    );
    if (!Item || Number(Item.x) < now) return undefined;
    return Item.g === undefined || Number(Item.g) === topic.generation ? (Item.r as SendResult) : undefined;
  }

  keyItem(topic: string, key: string, messageId: string, deliverableAt: number, expiresAt: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: {
          pk: keyIndexPk(topic, key),
          sk: keyIndexSk(deliverableAt, messageId),
          ttl: Math.ceil(expiresAt / 1000),
        },
      },
    };
  }

  /**
   * Names the dead-letter copy of `messageId` made for `group` at `at`; lives as long as the
   * original or the copy, whichever lasts longer. Until redriven it is also the group's record of
   * a dead letter it may redrive (`g1pk = Q#<group>`); a new dead letter of the same message for
   * the same group (after a redrive) replaces it.
   */
  deadLetterLinkItem(
    topic: string,
    messageId: string,
    group: string,
    copy: { topic: string; messageId: string; expiresAt: number },
    originalExpiresAt: number,
    at: number,
    order?: number,
  ): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: {
          pk: deadLetterLinkPk(topic, messageId),
          sk: group,
          t: copy.topic,
          m: copy.messageId,
          g1pk: redriveIndexPk(group),
          g1sk: redriveIndexSk(at, copy.messageId, order),
          ttl: Math.ceil(Math.max(originalExpiresAt, copy.expiresAt) / 1000),
        },
      },
    };
  }

  /**
   * The dead-letter copies of a message, by group (one Query; more only past 1 MB of links);
   * `redrivenSeq`: where the group's redrive put the message back in its redrive stream (the
   * link's `r`), when it did.
   */
  async deadLetterLinks(topic: string, messageId: string): Promise<Map<string, { topic: string; messageId: string; redrivenSeq?: number }>> {
    // Every page: a link is up to ~2.2 KB (a 557-character id twice), so about 470 groups' links
    // fill the 1 MB a Query answers; the query would have shown the others as not dead-lettered.
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': deadLetterLinkPk(topic, messageId) },
      ConsistentRead: true,
    });
    return new Map(
      items.map((item) => [
        String(item.sk),
        { topic: String(item.t), messageId: String(item.m), ...(item.r === undefined ? {} : { redrivenSeq: Number(item.r) }) },
      ]),
    );
  }

  /**
   * Message ids carrying `key`, newest first. `after[i]` is the page token that
   * resumes right after `messageIds[i]` (a caller that answers fewer ids pages on from there).
   */
  async byKey(topic: string, key: string, limit: number, token: string | undefined) {
    const pk = keyIndexPk(topic, key);
    const result = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: decodePageToken(token, pk),
        }),
      ),
    );
    const items = result.Items ?? [];
    return {
      messageIds: items.map((item) => messageIdOfKeyIndexSk(String(item.sk))),
      after: items.map((item) => encodePageToken({ pk: item.pk, sk: item.sk }) ?? ''),
      nextToken: encodePageToken(result.LastEvaluatedKey),
    };
  }
}
