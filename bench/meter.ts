/**
 * Counts what the handlers ask of DynamoDB: a middleware on the container's
 * client records every call (command, outcome, duration), injects
 * `ReturnConsumedCapacity: 'INDEXES'` so that DynamoDB Local reports the
 * capacity it charges (table and GSI apart), and models from item sizes what
 * DynamoDB Local leaves out (failed conditional writes) plus a size-model
 * cross-check of what it reports.
 *
 * Calls are attributed to the HTTP request that caused them (route and the
 * bench's `x-bench-tag` header) through AsyncLocalStorage; calls made outside
 * any request (timers of the local runtime) are attributed to `background`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { marshall } from '@aws-sdk/util-dynamodb';
import { wruOf, rruOf, itemBytes, type AttributeMap } from './units.js';
import { transactTargets, transactionTargetUnits, type ItemReader, type TransactTarget } from './transaction-units.js';
import { indexKeyOfItem, indexUnit, indexWrites, isClaimUpdate, isGrantUpdate, isRaiseUpdate, keyUnit, queryUnit, stringValue } from './key-units.js';

export interface Attribution {
  tag: string;
  route: string;
}

/** Totals of one (tag, route, command) key. */
export interface CallCounter {
  calls: number;
  /** Calls that ended in an error (conditional failures included). */
  errors: number;
  conditionalFailures: number;
  /** SDK attempts beyond the first (retries inside the client). */
  retries: number;
  /** Write units DynamoDB Local reported for the table, and for the GSI. */
  wruTable: number;
  wruGsi: number;
  /** Read units DynamoDB Local reported (table + GSI). */
  rru: number;
  /** Write units modelled for failed conditional writes (DynamoDB Local reports none; AWS charges them). */
  wruFailedModel: number;
  /** Read units modelled for reads DynamoDB Local reported as 0 (a Query or GetItem that found nothing; AWS bills a minimum). */
  rruMinModel: number;
  /** Calls that succeeded without a ConsumedCapacity in the answer. */
  unreported: number;
  /** Items read (Query/Get/BatchGet) and written (Put/Update/Delete, transaction items). */
  itemsRead: number;
  itemsWritten: number;
  /** Bytes written by puts, by the AWS item-size rules. */
  bytesPut: number;
  ms: number;
}

export interface HttpCounter {
  requests: number;
  /** Sum of server-side durations (ms), i.e. what the Lambda would be billed for, before rounding. */
  ms: number;
  /** Sum of the per-request durations rounded up to the next ms (Lambda bills per 1 ms). */
  billedMs: number;
  /** Request body bytes (HTTP API meters requests in 512 KB increments). */
  bytesIn: number;
  /** Requests counted as HTTP API requests: one per started 512 KB of request and response. */
  apiUnits: number;
  status: Record<string, number>;
}

/** Appends on one stream partition key (`S#<stream>`), for the capacity model (capacity-model.ts). */
export interface StreamKeyCounter {
  /** Segments written by successful calls. */
  appends: number;
  /** Calls whose condition failed on a segment or sentinel of this key: a lost append race. */
  lostRaces: number;
  /** Head reads: Query `pk = :pk`, descending, Limit 1. */
  headReads: number;
  /** Write units of the key's items by the size rules (×2 in transactions), failed conditional writes included. */
  wcu: number;
  /** Read units DynamoDB Local reported for queries and gets of the key (the minimum charge when it reported 0). */
  rcu: number;
  /**
   * A sequenced stream's counter updates on its sentinel (`sk = '#'`, lib/adapters/dynamodb/sequencer.ts
   * `grant`) that succeeded: one per segment write. Their units are in `wcu` (the same partition key).
   */
  grants: number;
  /** Filler puts (`hf: 1`, a sequenced stream's hole filled) that landed: in `wcu`, not in `appends`. */
  fillers: number;
}

/**
 * What a window asked of one capacity unit (key-units.ts: a table partition key, a cursor item, or a
 * GSI partition key), for the receive rows' capacity model (capacity-model.ts).
 */
export interface KeyCounter {
  /** Write units: DynamoDB Local's report for the table and the index apart (transactions by the size rules), failed conditional writes modelled (the old image's size when the answer carried it, else 1 WRU; a put: its item). */
  wcu: number;
  /** Read units: DynamoDB Local's report (GetItem, Query), per item by the size rules in a BatchGetItem, the minimum charge for nothing found. */
  rcu: number;
  /** Write calls (transaction items included) that succeeded, and those whose condition failed. */
  writes: number;
  failedWrites: number;
  /** Reads of the unit, and the strongly consistent ones among them. */
  reads: number;
  consistentReads: number;
  /** Cursor claims (key-units.ts `isClaimUpdate`) that succeeded, and those that lost (ConditionalCheckFailed). */
  claims: number;
  lostClaims: number;
  /** FIFO shard raises written on their own (key-units.ts `isRaiseUpdate`: a notice's `kn` outside a claim), successful. */
  raises: number;
  /**
   * Range claims (key-units.ts `isGrantUpdate`; docs/design.md, Range claims) that took effect: not
   * claims of the chain (a grant does not depend on `nx`), their units are in `wcu`. Absent in older results.
   */
  grants?: number;
}

export interface Snapshot {
  dynamo: Record<string, CallCounter>;
  /** Per `<tag>|<unit>`: units, calls and claims on that capacity unit (key-units.ts). */
  keys: Record<string, KeyCounter>;
  /** Per `<tag>|S#<stream>`: appends, lost races and units on that partition key. */
  streams: Record<string, StreamKeyCounter>;
  http: Record<string, HttpCounter>;
  /** Other AWS clients found on the container (Scheduler, SQS...): calls by client and command. */
  other: Record<string, number>;
  /** Size-model cross-check of what DynamoDB Local reported. */
  check: { compared: number; agreed: number; samples: string[] };
}

const DATA_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'TransactGetItemsCommand',
]);

const emptyCall = (): CallCounter => ({
  calls: 0,
  errors: 0,
  conditionalFailures: 0,
  retries: 0,
  wruTable: 0,
  wruGsi: 0,
  rru: 0,
  wruFailedModel: 0,
  rruMinModel: 0,
  unreported: 0,
  itemsRead: 0,
  itemsWritten: 0,
  bytesPut: 0,
  ms: 0,
});
export const emptyStreamKey = (): StreamKeyCounter => ({ appends: 0, lostRaces: 0, headReads: 0, wcu: 0, rcu: 0, grants: 0, fillers: 0 });
export const emptyKey = (): KeyCounter => ({ wcu: 0, rcu: 0, writes: 0, failedWrites: 0, reads: 0, consistentReads: 0, claims: 0, lostClaims: 0, raises: 0, grants: 0 });
const emptyHttp = (): HttpCounter => ({ requests: 0, ms: 0, billedMs: 0, bytesIn: 0, apiUnits: 0, status: {} });

interface ConsumedCapacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

/** Marshalled shape or document shape: DynamoDB Local's figures are cross-checked against item sizes of either. */
const asAttributes = (item: Record<string, unknown>): AttributeMap => {
  const values = Object.values(item);
  const marshalled =
    values.length > 0 &&
    values.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && /^(S|N|B|BOOL|NULL|M|L|SS|NS|BS)$/.test(Object.keys(v)[0] ?? ''));
  return (marshalled ? item : marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true })) as AttributeMap;
};

interface TransactItemInput {
  Put?: { TableName?: string; Item?: Record<string, unknown> };
  Update?: { TableName?: string; Key?: Record<string, unknown> };
  Delete?: { TableName?: string; Key?: Record<string, unknown> };
  ConditionCheck?: { TableName?: string; Key?: Record<string, unknown> };
}

/** The item a single-item write names (a put's item, an update's or delete's key) and its capacity unit. */
function writtenUnit(command: string, input: Record<string, unknown>): { item: Record<string, unknown> | undefined; unit: string | undefined } {
  const item = command === 'PutItemCommand' ? (input.Item as Record<string, unknown> | undefined) : (input.Key as Record<string, unknown> | undefined);
  return { item, unit: keyUnit(item) };
}

export class Meter {
  private readonly dynamo = new Map<string, CallCounter>();
  private readonly streams = new Map<string, StreamKeyCounter>();
  private readonly keys = new Map<string, KeyCounter>();
  private readonly http = new Map<string, HttpCounter>();
  private readonly other = new Map<string, number>();
  private readonly check = { compared: 0, agreed: 0, samples: [] as string[] };
  readonly als = new AsyncLocalStorage<Attribution>();
  private reader: ItemReader | undefined;

  /**
   * Reads items (uncounted) around each transaction, so that its units are computed from the items'
   * sizes instead of taken from DynamoDB Local, which under-reports transactions of several items
   * (transaction-units.ts). Without a reader, DynamoDB Local's figures are used.
   */
  readItemsWith(reader: ItemReader): void {
    this.reader = reader;
  }

  /** Adds the counting middleware to a DynamoDB client (the container's). */
  instrumentDynamo(client: { middlewareStack: { add: (...args: any[]) => void } }): void {
    client.middlewareStack.add(
      (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: { input: Record<string, unknown> }) => {
        const command = context.commandName ?? 'unknown';
        if (!DATA_COMMANDS.has(command)) return next(args);
        const injected = args.input.ReturnConsumedCapacity === undefined;
        if (injected) args.input.ReturnConsumedCapacity = 'INDEXES';
        const at = this.als.getStore();
        const counter = this.counter(at, command);
        counter.calls++;
        counter.itemsWritten += writtenItems(command, args.input);
        counter.bytesPut += putBytes(command, args.input);
        const reader = command === 'TransactWriteItemsCommand' ? this.reader : undefined;
        const targets: TransactTarget[] = reader ? transactTargets((args.input.TransactItems as TransactItemInput[] | undefined) ?? [], asAttributes) : [];
        const before = reader ? await Promise.all(targets.map((t) => reader(t.table, t.key))) : [];
        const started = performance.now();
        try {
          const result = await next(args);
          counter.ms += performance.now() - started;
          const output = result.output as Record<string, unknown>;
          counter.retries += Math.max(0, Number((output.$metadata as { attempts?: number } | undefined)?.attempts ?? 1) - 1);
          const consumed = output.ConsumedCapacity as ConsumedCapacity | ConsumedCapacity[] | undefined;
          if (consumed === undefined) counter.unreported++;
          const list = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
          const isWrite = /Put|Update|Delete|Write/.test(command);
          let reported = 0;
          let reportedTable = 0;
          let reportedGsi = 0;
          let writeTable = 0;
          for (const c of list) {
            const total = c.CapacityUnits ?? 0;
            reported += total;
            // The cross-check compares the table's share (the size rules below know nothing of the GSI).
            reportedTable += c.Table?.CapacityUnits ?? total;
            const gsi = Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((n, g) => n + (g.CapacityUnits ?? 0), 0);
            reportedGsi += gsi;
            if (isWrite) {
              if (reader) continue;
              counter.wruGsi += gsi;
              counter.wruTable += c.Table?.CapacityUnits ?? total - gsi;
              writeTable += c.Table?.CapacityUnits ?? total - gsi;
            } else counter.rru += total;
          }
          if (reader) {
            const after = await Promise.all(targets.map((t) => (t.kind === 'Update' ? reader(t.table, t.key) : Promise.resolve(undefined))));
            const perTarget = transactionTargetUnits(targets, before, after);
            const units = perTarget.reduce((n, u) => ({ table: n.table + u.table, gsi: n.gsi + u.gsi }), { table: 0, gsi: 0 });
            counter.wruTable += units.table;
            counter.wruGsi += units.gsi;
            this.compare('TransactWriteItemsCommand', reportedTable + reportedGsi, units.table + units.gsi);
            this.countTransactionKeys(at, targets, perTarget);
          }
          if (!isWrite && consumed !== undefined && reported === 0 && (command === 'QueryCommand' || command === 'GetItemCommand')) {
            counter.rruMinModel += args.input.ConsistentRead === true ? 1 : 0.5;
          }
          counter.itemsRead += readItems(command, output);
          this.countStreamKeys(at, command, args.input, { ok: true, rcu: reported, wcu: writeTable });
          // A cursor update whose index key depends on the cursor (a wide FIFO topic's bucket, `rk`): the item after it, read uncounted.
          const written = command === 'UpdateItemCommand' && reportedGsi > 0 ? indexWrites(args.input) : undefined;
          const itemKey = args.input.Key as Record<string, unknown> | undefined;
          const indexKey =
            written?.fromItem !== undefined && this.reader && itemKey
              ? indexKeyOfItem(written, await this.reader(String(args.input.TableName ?? ''), asAttributes(itemKey)).catch(() => undefined))
              : undefined;
          this.countKeys(at, command, args.input, output, { table: writeTable, gsi: isWrite ? reportedGsi : 0, read: isWrite ? 0 : reported }, reader !== undefined, indexKey);
          this.crossCheck(command, args.input, output, reportedTable);
          if (injected) delete output.ConsumedCapacity;
          return result;
        } catch (error) {
          counter.ms += performance.now() - started;
          counter.errors++;
          const name = (error as { name?: string }).name ?? '';
          const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons;
          if (name === 'ConditionalCheckFailedException' || (name === 'TransactionCanceledException' && reasons?.some((r) => r.Code === 'ConditionalCheckFailed'))) {
            counter.conditionalFailures++;
            counter.wruFailedModel += failedWriteModel(command, args.input);
            this.countStreamKeys(at, command, args.input, { ok: false, failed: failedIndexes(command, reasons) });
            // An update or delete whose answer has no old image: the item as it is now (read uncounted, when a reader is set) sizes what AWS bills.
            const image = (error as { Item?: Record<string, unknown> }).Item;
            const key = args.input.Key as Record<string, unknown> | undefined;
            const current =
              image === undefined && this.reader && key && (command === 'UpdateItemCommand' || command === 'DeleteItemCommand')
                ? await this.reader(String(args.input.TableName ?? ''), asAttributes(key)).catch(() => undefined)
                : undefined;
            this.countFailedKeys(at, command, args.input, { Item: image ?? current }, failedIndexes(command, reasons));
          }
          throw error;
        }
      },
      { step: 'initialize', priority: 'high', name: 'sluiceBenchMeter', override: true },
    );
  }

  /** Counts calls of any other AWS client (the Scheduler and SQS adapters when they exist). */
  instrumentOther(label: string, client: { middlewareStack: { add: (...args: any[]) => void } }): void {
    client.middlewareStack.add(
      (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: unknown) => {
        const key = `${label}.${context.commandName ?? 'unknown'}`;
        this.other.set(key, (this.other.get(key) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', priority: 'high', name: `sluiceBenchMeter${label}`, override: true },
    );
  }

  /**
   * Counts calls of some methods of an object (the local runtime's in-process
   * stand-ins for EventBridge Scheduler and SQS), passing them through unchanged.
   */
  instrumentMethods(label: string, target: Record<string, unknown>, names: string[]): string[] {
    const wrapped: string[] = [];
    for (const name of names) {
      const original = target[name];
      if (typeof original !== 'function') continue;
      const key = `${label}.${name}`;
      target[name] = (...args: unknown[]) => {
        this.other.set(key, (this.other.get(key) ?? 0) + 1);
        return (original as (...a: unknown[]) => unknown).apply(target, args);
      };
      wrapped.push(key);
    }
    return wrapped;
  }

  /**
   * Times every request the gateway serves (what Lambda would bill) and puts
   * the request's attribution in scope for the DynamoDB middleware. Runs
   * before the gateway's own listener, so the handler's async work inherits it.
   */
  instrumentServer(server: Server, routeOf: (method: string, path: string) => string): void {
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      const route = routeOf((req.method ?? 'GET').toUpperCase(), path);
      const tagHeader = req.headers['x-bench-tag'];
      const tag = typeof tagHeader === 'string' ? tagHeader : 'untagged';
      this.als.enterWith({ tag, route });
      const started = performance.now();
      // From the header, not a 'data' listener: reading the body here would start it flowing before the gateway listens.
      const bytesIn = Number(req.headers['content-length'] ?? 0) || 0;
      res.on('finish', () => {
        const ms = performance.now() - started;
        const key = `${tag}|${route}`;
        const counter = this.http.get(key) ?? emptyHttp();
        counter.requests++;
        counter.ms += ms;
        counter.billedMs += Math.max(1, Math.ceil(ms));
        counter.bytesIn += bytesIn;
        const bytesOut = Number(res.getHeader('content-length') ?? 0);
        counter.apiUnits += Math.max(1, Math.ceil(Math.max(bytesIn, bytesOut) / (512 * 1024)));
        counter.status[String(res.statusCode)] = (counter.status[String(res.statusCode)] ?? 0) + 1;
        this.http.set(key, counter);
      });
    });
  }

  /**
   * Adds counters kept elsewhere (the dispatcher's stream poller, the push
   * worker's wrapper, the push endpoint): each snapshot reads them into
   * `other` as `<label>.<name>`, so a window's diff holds what happened in it.
   */
  addSource(label: string, read: () => Record<string, number>): void {
    this.sources.push({ label, read });
  }
  private readonly sources: Array<{ label: string; read: () => Record<string, number> }> = [];

  snapshot(): Snapshot {
    const other = Object.fromEntries(this.other);
    for (const { label, read } of this.sources) for (const [k, v] of Object.entries(read())) other[`${label}.${k}`] = v;
    const dynamo: Record<string, CallCounter> = {};
    for (const [k, v] of this.dynamo) dynamo[k] = { ...v };
    const http: Record<string, HttpCounter> = {};
    for (const [k, v] of this.http) http[k] = { ...v, status: { ...v.status } };
    const streams: Record<string, StreamKeyCounter> = {};
    for (const [k, v] of this.streams) streams[k] = { ...v };
    const keys: Record<string, KeyCounter> = {};
    for (const [k, v] of this.keys) keys[k] = { ...v };
    return { dynamo, keys, streams, http, other, check: { ...this.check, samples: [...this.check.samples] } };
  }

  /**
   * Counts what a call did on stream partition keys: segments appended, lost append races (a failed
   * condition on a segment or sentinel put: another writer got the sequence number first), head
   * reads, and the units of each. Only real answers are counted: a race is lost when DynamoDB
   * Local said ConditionalCheckFailed for that item. A sequenced stream's counter updates (UpdateItem
   * on its sentinel) count their units on the key and as grants, never as races (a grant cannot lose
   * one; a failed one found no live counter); its filler puts count their units and as fillers, not
   * as appends, and a filler put that met the segment is no lost race (a segment put that met a
   * filler is one).
   */
  private countStreamKeys(
    at: Attribution | undefined,
    command: string,
    input: Record<string, unknown>,
    outcome: { ok: true; rcu: number; wcu?: number } | { ok: false; failed: Set<number> },
  ): void {
    const tag = at?.tag ?? 'background';
    const key = (pk: string) => {
      let c = this.streams.get(`${tag}|${pk}`);
      if (!c) this.streams.set(`${tag}|${pk}`, (c = emptyStreamKey()));
      return c;
    };
    if (command === 'QueryCommand' && outcome.ok) {
      const pk = stringValue((input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk']);
      if (!pk?.startsWith('S#')) return;
      const c = key(pk);
      if (input.KeyConditionExpression === 'pk = :pk' && input.ScanIndexForward === false && input.Limit === 1) c.headReads++;
      c.rcu += outcome.rcu > 0 ? outcome.rcu : input.ConsistentRead === true ? 1 : 0.5;
      return;
    }
    if (command === 'GetItemCommand' && outcome.ok) {
      const pk = stringValue((input.Key as Record<string, unknown> | undefined)?.pk);
      if (!pk?.startsWith('S#')) return;
      key(pk).rcu += outcome.rcu > 0 ? outcome.rcu : input.ConsistentRead === true ? 1 : 0.5;
      return;
    }
    if (command === 'UpdateItemCommand') {
      const k = input.Key as Record<string, unknown> | undefined;
      const pk = stringValue(k?.pk);
      if (!pk?.startsWith('S#')) return;
      const c = key(pk);
      // What DynamoDB Local reported for the table (the sentinel is small: 1 WRU), the 1 WRU minimum when it said nothing; a failed one 1 WRU.
      c.wcu += outcome.ok && (outcome.wcu ?? 0) > 0 ? (outcome.wcu ?? 0) : 1;
      if (outcome.ok && stringValue(k?.sk) === '#') c.grants++;
      return;
    }
    const puts: Array<Record<string, unknown> | undefined> =
      command === 'PutItemCommand'
        ? [input.Item as Record<string, unknown> | undefined]
        : command === 'TransactWriteItemsCommand'
          ? ((input.TransactItems as TransactItemInput[] | undefined) ?? []).map((t) => t.Put?.Item)
          : [];
    const factor = command === 'TransactWriteItemsCommand' ? 2 : 1;
    const lost = new Set<string>();
    puts.forEach((item, i) => {
      const target = streamItem(item);
      if (!target || !item) return;
      const c = key(target.pk);
      c.wcu += factor * wruOf(itemBytes(asAttributes(item)));
      const filler = item.hf === 1 || (item.hf as { N?: string } | undefined)?.N === '1';
      if (outcome.ok) {
        if (filler) c.fillers++;
        else if (target.segment) c.appends++;
      } else if (!filler && outcome.failed.has(i) && !lost.has(target.pk)) {
        lost.add(target.pk);
        c.lostRaces++;
      }
    });
  }

  private keyCounter(at: Attribution | undefined, unit: string): KeyCounter {
    const key = `${at?.tag ?? 'background'}|${unit}`;
    let c = this.keys.get(key);
    if (!c) this.keys.set(key, (c = emptyKey()));
    return c;
  }

  /**
   * Attributes a successful call's units to the capacity units it touched (key-units.ts): a write's
   * table units to its item's unit and its index units to the `g1pk` it sets or removes; a read's
   * units to the key read (BatchGetItem: each item by the size rules). Transactions with a reader
   * are counted per item by {@link countTransactionKeys}.
   */
  private countKeys(
    at: Attribution | undefined,
    command: string,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
    reported: { table: number; gsi: number; read: number },
    transactionsCounted: boolean,
    /** The index key an update wrote, when the item decided it (see key-units.ts `indexWrites`). */
    indexKey?: string,
  ): void {
    if (command === 'PutItemCommand' || command === 'UpdateItemCommand' || command === 'DeleteItemCommand') {
      const { item, unit } = writtenUnit(command, input);
      if (unit === undefined) return;
      const c = this.keyCounter(at, unit);
      c.writes++;
      c.wcu += reported.table;
      if (command === 'UpdateItemCommand' && isClaimUpdate(input)) c.claims++;
      if (command === 'UpdateItemCommand' && isGrantUpdate(input)) c.grants = (c.grants ?? 0) + 1;
      if (command === 'UpdateItemCommand' && isRaiseUpdate(input)) c.raises++;
      if (reported.gsi > 0) {
        const written = command === 'PutItemCommand' ? { set: stringValue(item?.g1pk) } : command === 'UpdateItemCommand' ? indexWrites(input) : {};
        const target = indexKey ?? written.set ?? written.removed;
        this.keyCounter(at, target === undefined ? indexUnit('?') : indexUnit(target)).wcu += reported.gsi;
      }
      return;
    }
    if (command === 'TransactWriteItemsCommand') {
      if (transactionsCounted) return;
      // Without a reader, DynamoDB Local's (under-reported) total goes to the first item.
      const first = ((input.TransactItems as TransactItemInput[] | undefined) ?? [])[0];
      const unit = keyUnit(first?.Put?.Item ?? first?.Update?.Key ?? first?.Delete?.Key ?? first?.ConditionCheck?.Key);
      if (unit !== undefined) this.keyCounter(at, unit).wcu += reported.table + reported.gsi;
      return;
    }
    if (command === 'GetItemCommand' || command === 'QueryCommand') {
      // One key read: its units as reported, or the minimum AWS bills for a read that found nothing.
      const unit = command === 'GetItemCommand' ? keyUnit(input.Key as Record<string, unknown> | undefined) : queryUnit(input);
      if (unit === undefined) return;
      const c = this.keyCounter(at, unit);
      c.reads++;
      if (input.ConsistentRead === true) c.consistentReads++;
      c.rcu += reported.read > 0 ? reported.read : input.ConsistentRead === true ? 1 : 0.5;
      return;
    }
    if (command === 'BatchGetItemCommand') {
      const requests = (input.RequestItems as Record<string, { Keys?: Array<Record<string, unknown>>; ConsistentRead?: boolean }> | undefined) ?? {};
      const responses = (output.Responses as Record<string, Array<Record<string, unknown>>> | undefined) ?? {};
      for (const [table, request] of Object.entries(requests)) {
        const found = new Map<string, Record<string, unknown>>();
        for (const item of responses[table] ?? []) {
          const unit = keyUnit(item);
          if (unit !== undefined) found.set(unit, item);
        }
        const consistent = request.ConsistentRead === true;
        for (const key of request.Keys ?? []) {
          const unit = keyUnit(key);
          if (unit === undefined) continue;
          const c = this.keyCounter(at, unit);
          c.reads++;
          if (consistent) c.consistentReads++;
          const item = found.get(unit);
          // The size rules per item (each item of a BatchGetItem is billed as a GetItem); nothing found: the minimum.
          c.rcu += item ? rruOf(itemBytes(asAttributes(item)), consistent) : consistent ? 1 : 0.5;
        }
      }
    }
  }

  /** A transaction's items, each with its own table units and its index units on the `g1pk` it leaves and writes. */
  private countTransactionKeys(at: Attribution | undefined, targets: TransactTarget[], units: Array<{ table: number; gsi: number; indexFrom?: string; indexTo?: string }>): void {
    targets.forEach((t, i) => {
      const u = units[i];
      const unit = keyUnit(t.key as Record<string, unknown>);
      if (!u || unit === undefined) return;
      const c = this.keyCounter(at, unit);
      if (t.kind !== 'ConditionCheck') c.writes++;
      c.wcu += u.table;
      if (u.gsi === 0) return;
      const sides = [u.indexFrom, u.indexTo].filter((k): k is string => k !== undefined);
      for (const side of sides) this.keyCounter(at, indexUnit(side)).wcu += u.gsi / sides.length;
    });
  }

  /**
   * A write whose condition failed: AWS bills it (DynamoDB Local reports nothing) — a put by its
   * item's size, an update or delete by the existing item's size: the old image when the answer
   * carried it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), else the item as read right after
   * (uncounted, with {@link Meter.readItemsWith}), else the 1 WRU minimum; a cancelled
   * transaction's items 2× that, as {@link failedWriteModel}. A failed claim is a lost claim race.
   */
  private countFailedKeys(at: Attribution | undefined, command: string, input: Record<string, unknown>, error: { Item?: Record<string, unknown> }, failed: Set<number>): void {
    if (command === 'PutItemCommand' || command === 'UpdateItemCommand' || command === 'DeleteItemCommand') {
      const { item, unit } = writtenUnit(command, input);
      if (unit === undefined) return;
      const c = this.keyCounter(at, unit);
      c.failedWrites++;
      c.wcu += command === 'PutItemCommand' && item ? wruOf(itemBytes(asAttributes(item))) : error.Item ? wruOf(itemBytes(asAttributes(error.Item))) : 1;
      if (command === 'UpdateItemCommand' && isClaimUpdate(input)) c.lostClaims++;
      return;
    }
    if (command !== 'TransactWriteItemsCommand') return;
    ((input.TransactItems as TransactItemInput[] | undefined) ?? []).forEach((t, i) => {
      const unit = keyUnit(t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key ?? t.ConditionCheck?.Key);
      if (unit === undefined) return;
      const c = this.keyCounter(at, unit);
      if (failed.has(i)) c.failedWrites++;
      c.wcu += 2 * (t.Put?.Item ? wruOf(itemBytes(asAttributes(t.Put.Item))) : 1);
    });
  }

  private counter(at: Attribution | undefined, command: string): CallCounter {
    const key = `${at?.tag ?? 'background'}|${at?.route ?? 'background'}|${command.replace(/Command$/, '')}`;
    let counter = this.dynamo.get(key);
    if (!counter) this.dynamo.set(key, (counter = emptyCall()));
    return counter;
  }

  /** Compares DynamoDB Local's figure with the AWS size rules where the call carries every item involved. */
  private crossCheck(command: string, input: Record<string, unknown>, output: Record<string, unknown>, reported: number) {
    let modelled: number | undefined;
    if (command === 'PutItemCommand' && input.Item) {
      modelled = wruOf(itemBytes(asAttributes(input.Item as Record<string, unknown>)));
    } else if (command === 'QueryCommand' && input.IndexName === undefined && input.ProjectionExpression === undefined && input.Select === undefined) {
      const items = (output.Items as Record<string, unknown>[] | undefined) ?? [];
      if (items.length === 0) return; // an empty result: DynamoDB Local says 0, the minimum charge is modelled apart
      modelled = rruOf(items.reduce((n, item) => n + itemBytes(asAttributes(item)), 0), input.ConsistentRead === true);
    } else if (command === 'GetItemCommand' && output.Item) {
      modelled = rruOf(itemBytes(asAttributes(output.Item as Record<string, unknown>)), input.ConsistentRead === true);
    }
    if (modelled === undefined) return;
    this.compare(command, reported, modelled);
  }

  private compare(command: string, reported: number, modelled: number) {
    this.check.compared++;
    if (Math.abs(modelled - reported) < 1e-9) this.check.agreed++;
    else if (this.check.samples.length < 8) this.check.samples.push(`${command}: DynamoDB Local ${reported}, size model ${modelled}`);
  }
}

/** Adds `b` to `a` key by key (for windows: after − before). */
export function diff(after: Snapshot, before: Snapshot): Snapshot {
  const dynamo: Record<string, CallCounter> = {};
  for (const [k, v] of Object.entries(after.dynamo)) {
    const b = before.dynamo[k] ?? emptyCall();
    const d = emptyCall();
    for (const f of Object.keys(d) as Array<keyof CallCounter>) d[f] = v[f] - b[f];
    if (d.calls > 0) dynamo[k] = d;
  }
  const http: Record<string, HttpCounter> = {};
  for (const [k, v] of Object.entries(after.http)) {
    const b = before.http[k] ?? emptyHttp();
    if (v.requests === b.requests) continue;
    const status: Record<string, number> = {};
    for (const [s, n] of Object.entries(v.status)) if (n - (b.status[s] ?? 0) > 0) status[s] = n - (b.status[s] ?? 0);
    http[k] = {
      requests: v.requests - b.requests,
      ms: v.ms - b.ms,
      billedMs: v.billedMs - b.billedMs,
      bytesIn: v.bytesIn - b.bytesIn,
      apiUnits: v.apiUnits - b.apiUnits,
      status,
    };
  }
  const streams: Record<string, StreamKeyCounter> = {};
  for (const [k, v] of Object.entries(after.streams)) {
    const b = before.streams[k] ?? emptyStreamKey();
    const d = emptyStreamKey();
    for (const f of Object.keys(d) as Array<keyof StreamKeyCounter>) d[f] = v[f] - b[f];
    if (Object.values(d).some((n) => n !== 0)) streams[k] = d;
  }
  const keys: Record<string, KeyCounter> = {};
  for (const [k, v] of Object.entries(after.keys ?? {})) {
    const b = before.keys?.[k] ?? emptyKey();
    const d = emptyKey();
    for (const f of Object.keys(d) as Array<keyof KeyCounter>) d[f] = (v[f] ?? 0) - (b[f] ?? 0);
    if (Object.values(d).some((n) => n !== 0)) keys[k] = d;
  }
  const other: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.other)) if (v - (before.other[k] ?? 0) > 0) other[k] = v - (before.other[k] ?? 0);
  return {
    dynamo,
    keys,
    streams,
    http,
    other,
    check: {
      compared: after.check.compared - before.check.compared,
      agreed: after.check.agreed - before.check.agreed,
      samples: after.check.samples.slice(before.check.samples.length),
    },
  };
}


/** A put of a stream's segment (16-digit sort key) or sentinel (`#`): the items an append race is about (keys.ts). */
function streamItem(item: Record<string, unknown> | undefined): { pk: string; segment: boolean } | undefined {
  const pk = stringValue(item?.pk);
  const sk = stringValue(item?.sk);
  if (!pk?.startsWith('S#') || sk === undefined) return undefined;
  if (sk === '#') return { pk, segment: false };
  return /^\d{16}$/.test(sk) ? { pk, segment: true } : undefined;
}

/** Which items of a failed write failed their condition: the one item of a put, or a transaction's cancellation reasons. */
function failedIndexes(command: string, reasons: Array<{ Code?: string }> | undefined): Set<number> {
  if (command !== 'TransactWriteItemsCommand') return new Set([0]);
  return new Set((reasons ?? []).flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : [])));
}

const writtenItems = (command: string, input: Record<string, unknown>): number => {
  if (command === 'TransactWriteItemsCommand') return ((input.TransactItems as unknown[] | undefined) ?? []).length;
  if (command === 'BatchWriteItemCommand') {
    return Object.values((input.RequestItems as Record<string, unknown[]> | undefined) ?? {}).reduce((n, l) => n + l.length, 0);
  }
  return /^(Put|Update|Delete)Item/.test(command) ? 1 : 0;
};

const readItems = (command: string, output: Record<string, unknown>): number => {
  if (command === 'QueryCommand' || command === 'ScanCommand') return ((output.Items as unknown[] | undefined) ?? []).length;
  if (command === 'GetItemCommand') return output.Item ? 1 : 0;
  if (command === 'BatchGetItemCommand') {
    return Object.values((output.Responses as Record<string, unknown[]> | undefined) ?? {}).reduce((n, l) => n + l.length, 0);
  }
  return 0;
};

const putBytes = (command: string, input: Record<string, unknown>): number => {
  if (command === 'PutItemCommand' && input.Item) return itemBytes(asAttributes(input.Item as Record<string, unknown>));
  if (command === 'TransactWriteItemsCommand') {
    return ((input.TransactItems as TransactItemInput[] | undefined) ?? []).reduce(
      (n, t) => n + (t.Put?.Item ? itemBytes(asAttributes(t.Put.Item)) : 0),
      0,
    );
  }
  return 0;
};

/**
 * What AWS would charge for a write whose condition failed (DynamoDB Local
 * reports nothing for it): the new item's size for a put, at least 1 WRU;
 * updates and deletes 1 WRU (their old image is not in the request: a lower
 * bound). A cancelled transaction is counted like a successful one (2× per
 * item): a conservative assumption, AWS does not document it precisely.
 */
function failedWriteModel(command: string, input: Record<string, unknown>): number {
  if (command === 'PutItemCommand' && input.Item) return wruOf(itemBytes(asAttributes(input.Item as Record<string, unknown>)));
  if (command === 'UpdateItemCommand' || command === 'DeleteItemCommand') return 1;
  if (command === 'TransactWriteItemsCommand') {
    return ((input.TransactItems as TransactItemInput[] | undefined) ?? []).reduce(
      (n, t) => n + 2 * (t.Put?.Item ? wruOf(itemBytes(asAttributes(t.Put.Item))) : 1),
      0,
    );
  }
  return 0;
}
