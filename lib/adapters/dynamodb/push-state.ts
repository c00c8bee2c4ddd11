/**
 * A push group's state item (`P#<group>`, sk `P`): its last push attempts
 * for GET /v1/groups/{g} and the console. Written once per push round, not
 * per message, and never read by the writer: one UpdateItem prepends the
 * round's attempts to `la` while `la` has room for them; when it has not
 * (the condition fails), a second UpdateItem moves `la` whole to `lb` and
 * starts `la` with the round's attempts. So each list holds at most
 * {@link PushLimits.lastAttemptsKept} entries by construction, and the
 * newest that many are in `la` + `lb`.
 *
 * Why two lists: DynamoDB refuses an update expression whose paths overlap
 * (`SET la = list_append(…)` with `REMOVE la[10]` is "Two document paths
 * overlap"; https://github.com/getmoto/moto/issues/8582 quotes AWS's answer
 * for a parent and a child path), so one expression cannot both prepend and
 * cut the list; and it evaluates every action against the item as it was
 * before the update, so `SET lb = la, la = :new` moves the old list
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html).
 * Concurrent workers may push one another's entries out of the window —
 * it is a diagnostic, never a decision.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PushLimits } from '../../domain/push.js';
import { call, conditional } from './call.js';

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

  /** The group's newest attempts (at most {@link PushLimits.lastAttemptsKept}), newest first. */
  async lastAttempts(group: string): Promise<PushAttempt[]> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: pushStateKey(group) })));
    const list = (value: unknown) => (Array.isArray(value) ? (value as PushAttempt[]) : []);
    return [...list(Item?.la), ...list(Item?.lb)].sort((a, b) => b.at - a.at).slice(0, PushLimits.lastAttemptsKept);
  }

  /**
   * Adds one round's `attempts` (its newest {@link PushLimits.lastAttemptsKept}, errors cut to
   * {@link ERROR_KEPT} characters): one UpdateItem, or two when `la` is full (see the file comment).
   */
  async record(group: string, attempts: readonly PushAttempt[]): Promise<void> {
    if (attempts.length === 0) return;
    const fresh = [...attempts]
      .sort((a, b) => b.at - a.at)
      .slice(0, PushLimits.lastAttemptsKept)
      .map((a) => ({ ...a, error: a.error === null ? null : a.error.slice(0, ERROR_KEPT) }));
    const prepended = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: pushStateKey(group),
          UpdateExpression: 'SET la = list_append(:fresh, if_not_exists(la, :empty))',
          ConditionExpression: 'attribute_not_exists(la) OR size(la) <= :room',
          ExpressionAttributeValues: { ':fresh': fresh, ':empty': [], ':room': PushLimits.lastAttemptsKept - fresh.length },
        }),
      ),
    );
    if (prepended) return;
    await call(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: pushStateKey(group),
          UpdateExpression: 'SET lb = la, la = :fresh',
          ExpressionAttributeValues: { ':fresh': fresh },
        }),
      ),
    );
  }
}

/** Characters of an attempt's `error` kept (a reason is a short sentence; this bounds the item). */
export const ERROR_KEPT = 200;
