/**
 * Cursor items: one per (consumer group, stream), pk "C#<group>", sk "<stream>".
 *
 *   nx  next sequence number never delivered to the group
 *   ns  first sequence number of the segment holding nx
 *   fl  leases in flight: { "<seq>": { e: expiresAt, k: token, d: deliveries, g: segment, t?: topic } }
 *   dn  recently completed: { "<seq>": { k: token, a: at, o: outcome, d: deliveries } }
 *   cm, dl  counters of committed and dead-lettered messages
 *
 * Every change is conditional: a claim on the `nx` it read and on the token of
 * every lease it renews; a commit or visibility change on its own lease token.
 * Claims and commits of different messages therefore never conflict.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CursorState, DoneEntry, DoneOutcome, Lease } from '../../domain/cursor.js';
import { call } from './call.js';
import { isConditionalFailure } from './errors.js';
import type { TransactItem } from './stream-log.js';

interface StoredLease {
  e: number;
  k: string;
  d: number;
  g: number;
  t?: string;
}
interface StoredDone {
  k: string;
  a: number;
  o: DoneOutcome;
  d: number;
}

const cursorPk = (group: string) => `C#${group}`;

/** The item's old image from a failed condition (the document client leaves it marshalled). */
const oldImage = (error: unknown): Record<string, unknown> | undefined => {
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item ? unmarshall(item) : undefined;
};

const toState = (item: Record<string, unknown>): CursorState => {
  const leases = new Map<number, Lease>();
  for (const [seq, l] of Object.entries((item.fl as Record<string, StoredLease> | undefined) ?? {})) {
    leases.set(Number(seq), { seq: Number(seq), expiresAt: l.e, token: l.k, deliveries: l.d, segment: l.g, topic: l.t });
  }
  const done = new Map<number, DoneEntry>();
  for (const [seq, d] of Object.entries((item.dn as Record<string, StoredDone> | undefined) ?? {})) {
    done.set(Number(seq), { seq: Number(seq), token: d.k, at: d.a, outcome: d.o, deliveries: d.d });
  }
  return {
    group: String(item.pk).slice(2),
    stream: String(item.sk),
    next: Number(item.nx),
    segmentStart: Number(item.ns),
    leases,
    done,
    committed: Number(item.cm ?? 0),
    deadLettered: Number(item.dl ?? 0),
  };
};

const storedLease = (lease: Lease): StoredLease => {
  const stored: StoredLease = { e: lease.expiresAt, k: lease.token, d: lease.deliveries, g: lease.segment };
  if (lease.topic !== undefined) stored.t = lease.topic;
  return stored;
};
const storedDone = (done: DoneEntry): StoredDone => ({ k: done.token, a: done.at, o: done.outcome, d: done.deliveries });

/** Builds update expressions with numbered placeholders. */
class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private n = 0;
  private readonly byName = new Map<string, string>();
  /** A placeholder for an attribute name; created on first use so that no name goes unused. */
  name(name: string): string {
    let key = this.byName.get(name);
    if (key === undefined) {
      key = `#n${this.n++}`;
      this.byName.set(name, key);
      this.names[key] = name;
    }
    return key;
  }
  value(value: unknown): string {
    const key = `:v${this.n++}`;
    this.values[key] = value;
    return key;
  }
}

export interface ClaimChange {
  /** The `nx` the plan was made from. */
  expectNext: number;
  next: number;
  segmentStart: number;
  /** New or renewed leases; renewals name the token they replace. */
  grant: Array<{ lease: Lease; replaces: string | undefined }>;
  /** Leases to close without delivery (message expired), with the token they must still carry. */
  close: Array<{ done: DoneEntry; replaces: string }>;
  forgetDone: number[];
}

export type CommitOutcome = 'committed' | 'expired';

export class CursorStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(group: string, stream: string): Promise<CursorState | undefined> {
    const { Item } = await call(() =>
      this.doc.send(
        new GetCommand({ TableName: this.table, Key: { pk: cursorPk(group), sk: stream }, ConsistentRead: true }),
      ),
    );
    return Item ? toState(Item) : undefined;
  }

  async list(group: string): Promise<CursorState[]> {
    const out: CursorState[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': cursorPk(group) },
            ExclusiveStartKey: start,
            ConsistentRead: true,
          }),
        ),
      );
      out.push(...(result.Items ?? []).map(toState));
      start = result.LastEvaluatedKey;
    } while (start !== undefined);
    return out;
  }

  /** Creates the cursor at `next` unless it already exists (subscribing twice changes nothing). */
  async createIfAbsent(group: string, stream: string, next: number, now: number): Promise<void> {
    try {
      await call(() =>
        this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: cursorPk(group), sk: stream, nx: next, ns: next, fl: {}, dn: {}, cm: 0, dl: 0, ca: now },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }

  /** Applies a claim plan; false when another receiver changed the cursor first. */
  async claim(group: string, stream: string, change: ClaimChange): Promise<boolean> {
    const x = new Expr();
    const sets = [`nx = ${x.value(change.next)}`, `ns = ${x.value(change.segmentStart)}`];
    const removes: string[] = [];
    const conditions = [`nx = ${x.value(change.expectNext)}`];
    const fl = () => x.name('fl');
    const dn = () => x.name('dn');
    for (const { lease, replaces } of change.grant) {
      const seq = x.name(String(lease.seq));
      sets.push(`${fl()}.${seq} = ${x.value(storedLease(lease))}`);
      if (replaces !== undefined) conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`);
    }
    for (const { done, replaces } of change.close) {
      const seq = x.name(String(done.seq));
      removes.push(`${fl()}.${seq}`);
      sets.push(`${dn()}.${seq} = ${x.value(storedDone(done))}`);
      conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`);
    }
    for (const seq of change.forgetDone) removes.push(`${dn()}.${x.name(String(seq))}`);
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ConditionExpression: conditions.join(' AND '),
            ...(Object.keys(x.names).length ? { ExpressionAttributeNames: x.names } : {}),
            ExpressionAttributeValues: x.values,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Commits leases of one stream in one write. When any token no longer
   * matches, each entry is retried alone and classified from the item's old
   * image: a repeat of a commit that took effect answers `committed`,
   * anything else `expired`.
   */
  async commit(
    group: string,
    stream: string,
    entries: Array<{ seq: number; token: string }>,
    now: number,
  ): Promise<CommitOutcome[]> {
    if (entries.length > 1 && (await this.commitAll(group, stream, entries, now))) return entries.map(() => 'committed');
    const out: CommitOutcome[] = [];
    for (const entry of entries) out.push(await this.commitOne(group, stream, entry, now));
    return out;
  }

  private commitExpression(entries: Array<{ seq: number; token: string }>, now: number) {
    const x = new Expr();
    const fl = x.name('fl');
    const dn = x.name('dn');
    const removes: string[] = [];
    const sets: string[] = [];
    const conditions: string[] = [];
    for (const { seq, token } of entries) {
      const s = x.name(String(seq));
      removes.push(`${fl}.${s}`);
      sets.push(`${dn}.${s} = ${x.value({ k: token, a: now, o: 'committed', d: Number(token.split('.', 1)[0]) || 1 })}`);
      conditions.push(`${fl}.${s}.k = ${x.value(token)}`);
    }
    return {
      UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')} ADD cm ${x.value(entries.length)}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: x.names,
      ExpressionAttributeValues: x.values,
    };
  }

  private async commitAll(group: string, stream: string, entries: Array<{ seq: number; token: string }>, now: number) {
    const unique = [...new Map(entries.map((e) => [e.seq, e])).values()];
    if (unique.length !== entries.length) return false;
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            ...this.commitExpression(entries, now),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  private async commitOne(group: string, stream: string, entry: { seq: number; token: string }, now: number): Promise<CommitOutcome> {
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            ...this.commitExpression([entry], now),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return 'committed';
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      const old = oldImage(error);
      const done = (old?.dn as Record<string, StoredDone> | undefined)?.[String(entry.seq)];
      return done !== undefined && done.k === entry.token && done.o === 'committed' ? 'committed' : 'expired';
    }
  }

  /** Moves a lease's expiry; false when the token is no longer the message's latest lease. */
  async setVisibility(group: string, stream: string, seq: number, token: string, expiresAt: number): Promise<boolean> {
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            UpdateExpression: 'SET fl.#s.e = :e',
            ConditionExpression: 'fl.#s.k = :k',
            ExpressionAttributeNames: { '#s': String(seq) },
            ExpressionAttributeValues: { ':e': expiresAt, ':k': token },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** The transaction item that closes a lease as dead-lettered (written with the dead-letter append). */
  deadLetterItem(group: string, stream: string, done: DoneEntry, token: string): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: { pk: cursorPk(group), sk: stream },
        UpdateExpression: 'SET dn.#s = :done REMOVE fl.#s ADD dl :one',
        ConditionExpression: 'fl.#s.k = :k',
        ExpressionAttributeNames: { '#s': String(done.seq) },
        ExpressionAttributeValues: { ':done': storedDone(done), ':k': token, ':one': 1 },
      },
    };
  }
}
