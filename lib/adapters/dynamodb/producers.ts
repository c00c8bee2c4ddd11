/**
 * Producer groups: pk "PRODUCER", sk name. The signing secret is stored
 * sealed (`sec`, KMS or local AES-GCM); after a rotation the previous one
 * (`prv`) keeps signing next to it until `pvu`.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ProducerGroupNotFoundError } from '../../domain/errors.js';
import type { OnMaxChecks, ProducerGroup } from '../../domain/model.js';
import { call, conditional, conditionalWithImage, conditionFailureImage } from './call.js';
import { isConditionalFailure } from './errors.js';
import { PRODUCER_PK as PK } from './keys.js';
import { decodePageToken, encodePageToken, type Page } from './catalog.js';

export interface StoredProducer extends ProducerGroup {
  sealedSecret: string;
  sealedPrevious: string | undefined;
  previousUntil: number | undefined;
}

const toProducer = (item: Record<string, unknown>): StoredProducer => ({
  name: String(item.sk),
  checkerUrl: String(item.url),
  checkIntervalSeconds: Number(item.civ),
  maxChecks: Number(item.mxc),
  onMaxChecks: item.omc as OnMaxChecks,
  createdAt: Number(item.ca),
  updatedAt: Number(item.ua),
  secretRotatedAt: Number(item.sra),
  sealedSecret: String(item.sec),
  sealedPrevious: item.prv === undefined ? undefined : String(item.prv),
  previousUntil: item.pvu === undefined ? undefined : Number(item.pvu),
});

export type ProducerSettings = Pick<ProducerGroup, 'checkerUrl' | 'checkIntervalSeconds' | 'maxChecks' | 'onMaxChecks'>;

export class ProducerStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(name: string): Promise<StoredProducer | undefined> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: PK, sk: name }, ConsistentRead: true })),
    );
    return Item ? toProducer(Item) : undefined;
  }

  /** Creates the group with its sealed secret; undefined when it exists already. */
  async create(name: string, settings: ProducerSettings, sealedSecret: string, now: number): Promise<StoredProducer | undefined> {
    const item = {
      pk: PK,
      sk: name,
      url: settings.checkerUrl,
      civ: settings.checkIntervalSeconds,
      mxc: settings.maxChecks,
      omc: settings.onMaxChecks,
      ca: now,
      ua: now,
      sra: now,
      sec: sealedSecret,
    };
    try {
      await call(() =>
        this.doc.send(
          new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        ),
      );
      return toProducer(item);
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      // The SDK's retry of this create, which had landed (its answer lost; docs/design.md, Append,
      // "A put that landed, retried"), meets the item it wrote: its sealed secret (random, sealed
      // afresh) says so, and the create answers the secret — the only time it is shown.
      return conditionFailureImage(error)?.sec === sealedSecret ? toProducer(item) : undefined;
    }
  }

  async update(name: string, settings: ProducerSettings, now: number): Promise<StoredProducer> {
    try {
      const { Attributes } = await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: PK, sk: name },
            UpdateExpression: 'SET #url = :url, civ = :civ, mxc = :mxc, omc = :omc, ua = :now',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#url': 'url' },
            ExpressionAttributeValues: {
              ':url': settings.checkerUrl,
              ':civ': settings.checkIntervalSeconds,
              ':mxc': settings.maxChecks,
              ':omc': settings.onMaxChecks,
              ':now': now,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return toProducer(Attributes ?? {});
    } catch (error) {
      if (isConditionalFailure(error)) throw new ProducerGroupNotFoundError(name);
      throw error;
    }
  }

  /** Replaces the secret; the old one signs along until `previousUntil`. Conditional on the secret it replaces. */
  async rotate(name: string, expectSealed: string, sealedSecret: string, previousUntil: number, now: number, previous: string = expectSealed): Promise<boolean> {
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: { pk: PK, sk: name },
      UpdateExpression: 'SET sec = :new, prv = :prev, pvu = :until, sra = :now, ua = :now',
      ConditionExpression: 'sec = :old',
      ExpressionAttributeValues: { ':new': sealedSecret, ':old': expectSealed, ':prev': previous, ':until': previousUntil, ':now': now },
    });
    // The SDK's retry of this rotation, which had landed, meets its own new secret: it took effect.
    // (Taken for a lost race, the caller rotated again: the secret the user held stopped signing at
    // once, replaced as `prv` by one never shown.)
    return result.ok || result.old?.sec === sealedSecret;
  }

  /** One page of producer groups by name (one Query of the `PRODUCER` collection). */
  async list(limit: number, token: string | undefined): Promise<Page<StoredProducer>> {
    const result = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': PK },
          Limit: limit,
          ExclusiveStartKey: decodePageToken(token, PK),
          ConsistentRead: true,
        }),
      ),
    );
    return { items: (result.Items ?? []).map(toProducer), nextToken: encodePageToken(result.LastEvaluatedKey) };
  }

  /** Deletes the group; false when there was none. */
  async delete(name: string): Promise<boolean> {
    return conditional(() =>
      this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: PK, sk: name }, ConditionExpression: 'attribute_exists(pk)' })),
    );
  }
}
