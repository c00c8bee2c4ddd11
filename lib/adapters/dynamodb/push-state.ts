/**
 * A push group's state item (`P#<group>`, sk `P`): `la`, its last push
 * attempts, newest first (a small ring for GET /v1/groups/{g} and the
 * console). Written once per push round, not per message; concurrent workers
 * may overwrite each other's entries — it is a diagnostic, never a decision.
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call } from './call.js';

/** One push request's outcome. */
export interface PushAttempt {
  /** Epoch ms the request started. */
  at: number;
  /** HTTP status, or null (no answer: timeout, connection refused, Lambda invoke failure). */
  status: number | null;
  latencyMs: number;
  /** Why it failed (null for a 2xx without retries). */
  error: string | null;
  messages: number;
  /** Messages the answer asked to retry (or all, when the request failed). */
  retried: number;
}

export const pushStateKey = (group: string) => ({ pk: `P#${group}`, sk: 'P' });

export class PushStateStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async lastAttempts(group: string): Promise<PushAttempt[]> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: pushStateKey(group) })));
    return Array.isArray(Item?.la) ? (Item.la as PushAttempt[]) : [];
  }

  /** Stores `attempts` (newest first, already cut to the ring's size). */
  async record(group: string, attempts: readonly PushAttempt[]): Promise<void> {
    await call(() => this.doc.send(new PutCommand({ TableName: this.table, Item: { ...pushStateKey(group), la: attempts } })));
  }
}
