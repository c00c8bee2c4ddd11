/**
 * Small side items written in the same transaction as a segment:
 *
 *   dedup  pk "U#<topic>#<dedupId>", sk "U"  {r: send result, x: expires (ms), ttl}
 *   key    pk "K#<topic>#<key>", sk "<13-digit deliverableAt>#<messageId>"  {ttl}
 *   dead-letter link  pk "D#<topic>#<messageId>", sk "<group>"  {t: dead-letter topic, m: copy's id, ttl}
 *          written in the dead-letter transaction: the original's query names its copies
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SendResult } from '../../domain/model.js';
import { call } from './call.js';
import { decodePageToken, encodePageToken } from './catalog.js';
import { deadLetterLinkPk, dedupKey, keyIndexPk, keyIndexSk, messageIdOfKeyIndexSk } from './keys.js';
import type { TransactItem } from './write-batch.js';

export class Markers {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Claims a dedup id for `result`; fails its condition when the id is already claimed and not expired. */
  dedupItem(topic: string, dedupId: string, result: SendResult, now: number, windowSeconds: number): TransactItem {
    const expires = now + windowSeconds * 1000;
    return {
      Put: {
        TableName: this.table,
        Item: { ...dedupKey(topic, dedupId), r: result, x: expires, ttl: Math.ceil(expires / 1000) },
        ConditionExpression: 'attribute_not_exists(pk) OR x < :now',
        ExpressionAttributeValues: { ':now': now },
      },
    };
  }

  async dedupResult(topic: string, dedupId: string, now: number): Promise<SendResult | undefined> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: dedupKey(topic, dedupId), ConsistentRead: true })),
    );
    return Item && Number(Item.x) >= now ? (Item.r as SendResult) : undefined;
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

  /** Names the dead-letter copy of `messageId` made for `group`; lives as long as the original. */
  deadLetterLinkItem(topic: string, messageId: string, group: string, copy: { topic: string; messageId: string }, originalExpiresAt: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: { pk: deadLetterLinkPk(topic, messageId), sk: group, t: copy.topic, m: copy.messageId, ttl: Math.ceil(originalExpiresAt / 1000) },
      },
    };
  }

  /** The dead-letter copies of a message, by group (one Query). */
  async deadLetterLinks(topic: string, messageId: string): Promise<Map<string, { topic: string; messageId: string }>> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': deadLetterLinkPk(topic, messageId) },
          ConsistentRead: true,
        }),
      ),
    );
    return new Map((Items ?? []).map((item) => [String(item.sk), { topic: String(item.t), messageId: String(item.m) }]));
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
