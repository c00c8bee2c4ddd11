/**
 * The measured workloads: the raw DynamoDB Local floor, HTTP send /
 * receive+commit / lifecycle throughput, send→receive latency, scheduled
 * lateness and per-message-type cost. Every loop is bounded by a deadline and
 * by a count.
 */
import { PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Api, HttpError, messageBody, sentAt, type BodyKind, type Reply } from './http.js';
import { diff, type Meter, type Snapshot } from './meter.js';
import { cpuSeconds, percentiles, sleep, type Percentiles } from './stats.js';
import type { PushProbe } from './push-cost.js';

export type TopicType = 'standard' | 'fifo';
export type Mode = 'standard' | 'serialized' | 'concurrent' | 'protected';
export const FIFO_MODES = ['serialized', 'concurrent', 'protected'] as const;

/** The first client index of a scale row's producers (bench/client-containers.ts). */
export const PRODUCER_CLIENTS = 256;

/**
 * Clients `first` … `first + count − 1` each make one request at once (`request`, under a warm-up tag,
 * before the row's window and with the round trip off): a row measures warm containers — their
 * catalog cache holds the topic and group, their picker or cursor cache has a partition — as a
 * steady load on AWS keeps them, not each container's first request (on a short row with 256
 * clients, 256 cold catalog reads of one group item read as that item's bound).
 */
export async function warmClients<T>(ctx: Pick<Ctx, 'client'>, first: number, count: number, request: (api: Api) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => request(ctx.client(first + i))));
}

export interface Ctx {
  api: Api;
  /**
   * The scale rows' clients: client `i`'s requests, served by a container of its own (as on AWS,
   * bench/client-containers.ts), or by the local runtime with `--shared-container`. Consumers are
   * clients 0–255, producers {@link PRODUCER_CLIENTS} on (sends and receives run in different
   * functions on AWS, so never in one container).
   */
  client: (i: number) => Api;
  meter: Meter;
  dynamoPid: number | undefined;
  concurrency: number;
  bodyBytes: number;
  shards: number;
  log: (line: string) => void;
}

/** A measured window: elapsed time, what the meter counted in it, the CPU the two processes used. */
export interface Window {
  seconds: number;
  counted: Snapshot;
  /** Cores busy on average: this process (runtime + load generator), DynamoDB Local, everything else on the machine. */
  cpu: { bench: number; dynamoLocal: number | undefined; others: number | undefined };
}

export async function measured<T>(ctx: Ctx, fn: () => Promise<T>): Promise<{ result: T; window: Window }> {
  const before = ctx.meter.snapshot();
  const cpu0 = cpuSeconds(ctx.dynamoPid);
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(ctx.dynamoPid);
  return {
    result,
    window: {
      seconds,
      counted: diff(ctx.meter.snapshot(), before),
      cpu: {
        bench: (cpu1.self - cpu0.self) / seconds,
        dynamoLocal: cpu1.other !== undefined && cpu0.other !== undefined ? (cpu1.other - cpu0.other) / seconds : undefined,
        others:
          cpu1.machine !== undefined && cpu0.machine !== undefined
            ? Math.max(0, (cpu1.machine - cpu0.machine - (cpu1.self - cpu0.self) - ((cpu1.other ?? 0) - (cpu0.other ?? 0))) / seconds)
            : undefined,
      },
    },
  };
}

/** DynamoDB totals of a window, optionally only for some tags. */
export function dynamoTotals(s: Snapshot, tagFilter?: (tag: string) => boolean) {
  const out = { requests: 0, wruTable: 0, wruGsi: 0, wruFailedModel: 0, rru: 0, rruMinModel: 0, conditionalFailures: 0, bytesPut: 0, itemsWritten: 0, byCommand: {} as Record<string, number> };
  for (const [key, c] of Object.entries(s.dynamo)) {
    const [tag, , command] = key.split('|');
    if (tagFilter && !tagFilter(tag ?? '')) continue;
    out.requests += c.calls;
    out.wruTable += c.wruTable;
    out.wruGsi += c.wruGsi;
    out.wruFailedModel += c.wruFailedModel;
    out.rru += c.rru;
    out.rruMinModel += c.rruMinModel;
    out.bytesPut += c.bytesPut;
    out.itemsWritten += c.itemsWritten;
    out.conditionalFailures += c.conditionalFailures;
    out.byCommand[command ?? '?'] = (out.byCommand[command ?? '?'] ?? 0) + c.calls;
  }
  return out;
}

export function httpTotals(s: Snapshot, tagFilter?: (tag: string) => boolean) {
  const out = { requests: 0, billedMs: 0, ms: 0, apiUnits: 0, byRoute: {} as Record<string, number>, billedMsByRoute: {} as Record<string, number>, status: {} as Record<string, number> };
  for (const [key, c] of Object.entries(s.http)) {
    const [tag, route] = key.split('|');
    if (tagFilter && !tagFilter(tag ?? '')) continue;
    out.requests += c.requests;
    out.billedMs += c.billedMs;
    out.ms += c.ms;
    out.apiUnits += c.apiUnits;
    out.byRoute[route ?? '?'] = (out.byRoute[route ?? '?'] ?? 0) + c.requests;
    out.billedMsByRoute[route ?? '?'] = (out.billedMsByRoute[route ?? '?'] ?? 0) + c.billedMs;
    for (const [st, n] of Object.entries(c.status)) out.status[st] = (out.status[st] ?? 0) + n;
  }
  return out;
}

/** Runs `n` workers until each returns; they check the deadline themselves. */
const workers = (n: number, fn: (w: number) => Promise<void>) => Promise.all(Array.from({ length: n }, (_, w) => fn(w)));

/** Counts failed requests; gives up on a cell after too many (the cell is then reported as failed). */
class Errors {
  readonly byStatus: Record<string, number> = {};
  private total = 0;
  constructor(private readonly limit = 200) {}
  add(status: number | string) {
    this.byStatus[String(status)] = (this.byStatus[String(status)] ?? 0) + 1;
    if (++this.total > this.limit) throw new Error(`too many failed requests: ${JSON.stringify(this.byStatus)}`);
  }
}

/** Retry-worthy answers (throttling, a busy store) back off briefly; anything else is an error too. */
async function tolerate(errors: Errors, reply: Reply): Promise<boolean> {
  if (reply.status < 300) return true;
  errors.add(reply.status);
  await sleep(reply.status === 429 || reply.status === 503 ? 20 + Math.random() * 30 : 5);
  return false;
}

// ── floor ────────────────────────────────────────────────────────────────

export interface FloorResult {
  kind: 'PutItem' | 'TransactWriteItems(2)';
  concurrency: number;
  seconds: number;
  operations: number;
  perSecond: number;
  latency: Percentiles;
  errors: number;
  cpu: Window['cpu'];
}

let floorRuns = 0;

/** Raw DynamoDB Local writes at the benchmark's concurrency, on a table of their own. */
export async function floor(
  ctx: Ctx,
  doc: DynamoDBDocumentClient,
  table: string,
  kind: FloorResult['kind'],
  seconds: number,
): Promise<FloorResult> {
  const body = 'x'.repeat(ctx.bodyBytes);
  const run = ++floorRuns; // fresh keys for every sample: the puts are conditional on the item not existing
  const latencies: number[] = [];
  let operations = 0;
  let errors = 0;
  const { window } = await measured(ctx, async () => {
    const deadline = performance.now() + seconds * 1000;
    await workers(ctx.concurrency, async (w) => {
      for (let i = 0; performance.now() < deadline && i < 1_000_000; i++) {
        const key = `${kind === 'PutItem' ? 'P' : 'T'}${run}#${w}`;
        const sk = String(i).padStart(16, '0');
        const t0 = performance.now();
        try {
          if (kind === 'PutItem') {
            await doc.send(new PutCommand({ TableName: table, Item: { pk: key, sk, m: body }, ConditionExpression: 'attribute_not_exists(pk)' }));
          } else {
            await doc.send(
              new TransactWriteCommand({
                TransactItems: [
                  { Put: { TableName: table, Item: { pk: key, sk, m: body }, ConditionExpression: 'attribute_not_exists(pk)' } },
                  { Put: { TableName: table, Item: { pk: `${key}#side`, sk, v: i } } },
                ],
              }),
            );
          }
          operations++;
          latencies.push(performance.now() - t0);
        } catch {
          if (++errors > 100) throw new Error(`${kind} floor: too many errors`);
        }
      }
    });
  });
  return { kind, concurrency: ctx.concurrency, seconds: window.seconds, operations, perSecond: operations / window.seconds, latency: percentiles(latencies), errors, cpu: window.cpu };
}

// ── throughput cells ─────────────────────────────────────────────────────

export interface CellResult {
  id: string;
  topicType: TopicType;
  mode: Mode;
  op: 'send' | 'receive+commit' | 'lifecycle';
  batch: number;
  seconds: number;
  messages: number;
  perSecond: number;
  /** For lifecycle cells: messages sent per second (the consumers may lag behind). */
  sentPerSecond?: number;
  /** Lifecycle cells: raw PutItem/s measured just before the cell (the machine's load drifts; this pairs the ratio). */
  adjacentFloor?: number;
  httpRequests: number;
  requestLatency: Percentiles;
  /** Lifecycle cells: send → received, under this load. */
  endToEnd?: Percentiles;
  errors: Record<string, number>;
  perMessage: { dynamoRequests: number; wru: number; wruGsi: number; wruFailedModel: number; rru: number; rruMinModel: number; conditionalFailures: number };
  cpu: Window['cpu'];
  /** DynamoDB calls of the window by route and command (per message), largest first. */
  breakdown: Array<{ route: string; command: string; requests: number; wru: number; rru: number; conditionalFailures: number }>;
  failed?: string;
}

const shardOf = (ctx: Ctx, n: number) => `s${((n % ctx.shards) + ctx.shards) % ctx.shards}`;

function entry(ctx: Ctx, type: TopicType, n: number, extra: Record<string, unknown> = {}, body: BodyKind = 'json') {
  return { body: messageBody(ctx.bodyBytes, {}, body), ...(type === 'fifo' ? { shardKey: shardOf(ctx, n) } : {}), ...extra };
}

/** Sends `batch` messages (one request: single send or batch); the number accepted. */
async function sendOnce(ctx: Ctx, topic: string, type: TopicType, batch: number, n: number, tag: string, errors: Errors, latencies: number[]) {
  if (batch === 1) {
    const reply = await ctx.api.request('POST', `/v1/topics/${topic}/messages`, entry(ctx, type, n), tag);
    latencies.push(reply.ms);
    return (await tolerate(errors, reply)) ? 1 : 0;
  }
  const entries = Array.from({ length: batch }, (_, j) => entry(ctx, type, n + j));
  const reply = await ctx.api.request<{ results: Array<{ error?: unknown }> }>('POST', `/v1/topics/${topic}/messages/batch`, { entries }, tag);
  latencies.push(reply.ms);
  if (!(await tolerate(errors, reply))) return 0;
  const failed = reply.body.results.filter((r) => r.error !== undefined);
  for (const f of failed) errors.add(`entry:${JSON.stringify(f.error).slice(0, 60)}`);
  return batch - failed.length;
}

interface Received {
  messageId: string;
  receiptHandle: string;
  body: string;
}

/** Receives up to `max`; commits what came; returns the messages and the count committed (or pending). */
async function receiveAndCommit(ctx: Ctx, group: string, max: number, waitSeconds: number, tag: string, errors: Errors, latencies: number[]) {
  const got = await ctx.api.request<{ messages: Received[] }>('POST', `/v1/groups/${group}/receive`, { maxMessages: max, waitSeconds, visibilityTimeoutSeconds: 300 }, tag);
  const receivedAt = performance.now();
  latencies.push(got.ms);
  if (!(await tolerate(errors, got))) return { messages: [] as Received[], committed: 0, receivedAt };
  const messages = got.body.messages;
  if (messages.length === 0) return { messages, committed: 0, receivedAt };
  const res = await ctx.api.request<{ results: Array<{ status?: string; error?: unknown }> }>(
    'POST',
    `/v1/groups/${group}/commit`,
    { entries: messages.map((m) => ({ receiptHandle: m.receiptHandle })) },
    tag,
  );
  latencies.push(res.ms);
  if (!(await tolerate(errors, res))) return { messages, committed: 0, receivedAt };
  let committed = 0;
  for (const r of res.body.results) {
    if (r.status === 'committed' || r.status === 'pending') committed++;
    else errors.add(`commit:${JSON.stringify(r.error).slice(0, 60)}`);
  }
  return { messages, committed, receivedAt };
}

function cellResult(
  ctx: Ctx,
  base: Pick<CellResult, 'id' | 'topicType' | 'mode' | 'op' | 'batch'>,
  window: Window,
  seconds: number,
  messages: number,
  latencies: number[],
  errors: Errors,
  extra: Partial<CellResult> = {},
): CellResult {
  const d = dynamoTotals(window.counted);
  const h = httpTotals(window.counted);
  const per = (n: number) => (messages > 0 ? n / messages : 0);
  return {
    ...base,
    seconds,
    messages,
    perSecond: seconds > 0 ? messages / seconds : 0,
    httpRequests: h.requests,
    requestLatency: percentiles(latencies),
    errors: errors.byStatus,
    perMessage: {
      dynamoRequests: per(d.requests),
      wru: per(d.wruTable + d.wruGsi),
      wruGsi: per(d.wruGsi),
      wruFailedModel: per(d.wruFailedModel),
      rru: per(d.rru),
      rruMinModel: per(d.rruMinModel),
      conditionalFailures: per(d.conditionalFailures),
    },
    cpu: window.cpu,
    breakdown: breakdownOf(window.counted, messages),
    ...extra,
  };
}

/** Per-message DynamoDB calls of a window by route and command, largest first. */
function breakdownOf(s: Snapshot, messages: number) {
  const out = new Map<string, { route: string; command: string; requests: number; wru: number; rru: number; conditionalFailures: number }>();
  const m = Math.max(1, messages);
  for (const [key, c] of Object.entries(s.dynamo)) {
    const [, route = '?', command = '?'] = key.split('|');
    const b = out.get(`${route}|${command}`) ?? { route, command, requests: 0, wru: 0, rru: 0, conditionalFailures: 0 };
    b.requests += c.calls / m;
    b.wru += (c.wruTable + c.wruGsi + c.wruFailedModel) / m;
    b.rru += (c.rru + c.rruMinModel) / m;
    b.conditionalFailures += c.conditionalFailures / m;
    out.set(`${route}|${command}`, b);
  }
  return [...out.values()].sort((a, b) => b.requests - a.requests).slice(0, 12);
}

/**
 * Opens every stream a workload will touch (a stream's first append is a
 * one-time transaction that opens its epoch) and drains what that wrote, so
 * that the measured cells see steady-state costs: one message per FIFO shard,
 * or 16 single sends over the 4 partitions of a standard topic.
 */
export async function warmUp(ctx: Ctx, topic: string, type: TopicType, groups: string[]): Promise<void> {
  const errors = new Errors(50);
  if (type === 'fifo') {
    const entries = Array.from({ length: ctx.shards }, (_, i) => entry(ctx, type, i));
    for (let i = 0; i < entries.length; i += 100) await ctx.api.must('POST', `/v1/topics/${topic}/messages/batch`, { entries: entries.slice(i, i + 100) }, 'warmup');
  } else {
    await Promise.all(Array.from({ length: 16 }, (_, i) => ctx.api.must('POST', `/v1/topics/${topic}/messages`, entry(ctx, type, i), 'warmup', [201])));
  }
  const expected = type === 'fifo' ? ctx.shards : 16;
  for (const group of groups) {
    let got = 0;
    for (let i = 0, empty = 0; got < expected && i < 200 && empty < 5; i++) {
      const r = await receiveAndCommit(ctx, group, 100, empty === 0 ? 0 : 1, 'warmup', errors, []);
      got += r.messages.length;
      empty = r.messages.length === 0 ? empty + 1 : 0;
    }
  }
}

export async function sendCell(ctx: Ctx, id: string, topic: string, type: TopicType, batch: number, seconds: number): Promise<CellResult> {
  const errors = new Errors();
  const latencies: number[] = [];
  let messages = 0;
  const { window } = await measured(ctx, async () => {
    const deadline = performance.now() + seconds * 1000;
    await workers(ctx.concurrency, async (w) => {
      for (let i = 0; performance.now() < deadline && i < 100_000; i++) {
        // (`messages += await …` would read `messages` before the await and lose the other workers' counts.)
        const accepted = await sendOnce(ctx, topic, type, batch, w * 7919 + i * batch, `send:${id}`, errors, latencies);
        messages += accepted;
      }
    });
  });
  return cellResult(ctx, { id, topicType: type, mode: type === 'fifo' ? 'concurrent' : 'standard', op: 'send', batch }, window, window.seconds, messages, latencies, errors);
}

/** Drains a backlog: receive (no wait) + commit until the backlog is gone or the time is up. */
export async function drainCell(ctx: Ctx, id: string, group: string, type: TopicType, mode: Mode, batch: number, seconds: number): Promise<CellResult> {
  const errors = new Errors();
  const latencies: number[] = [];
  let messages = 0;
  let lastCommit = 0;
  const t0 = performance.now();
  const { window } = await measured(ctx, async () => {
    const deadline = t0 + seconds * 1000;
    await workers(ctx.concurrency, async () => {
      let empty = 0;
      for (let i = 0; performance.now() < deadline && i < 100_000 && empty < 3; i++) {
        const { committed, messages: got } = await receiveAndCommit(ctx, group, batch, 0, `drain:${id}`, errors, latencies);
        // Requests in flight at the deadline finish and count: the rate is over the time until the last commit.
        messages += committed;
        if (committed > 0) lastCommit = performance.now();
        if (got.length === 0) {
          empty++;
          await sleep(10);
        } else empty = 0;
      }
    });
  });
  const active = lastCommit > 0 ? (lastCommit - t0) / 1000 : window.seconds;
  return cellResult(ctx, { id, topicType: type, mode, op: 'receive+commit', batch }, window, active, messages, latencies, errors);
}

/** Closed loop per worker: send `batch`, receive up to `batch` (long poll 1 s), commit; counts commits. */
export async function lifecycleCell(ctx: Ctx, id: string, topic: string, group: string, type: TopicType, mode: Mode, batch: number, seconds: number): Promise<CellResult> {
  const errors = new Errors();
  const latencies: number[] = [];
  const e2e: number[] = [];
  let messages = 0;
  let sent = 0;
  const { window } = await measured(ctx, async () => {
    const deadline = performance.now() + seconds * 1000;
    await workers(ctx.concurrency, async (w) => {
      for (let i = 0; performance.now() < deadline && i < 100_000; i++) {
        const accepted = await sendOnce(ctx, topic, type, batch, w * 7919 + i * batch, `life:${id}`, errors, latencies);
        sent += accepted;
        const { committed, messages: got, receivedAt } = await receiveAndCommit(ctx, group, batch, 1, `life:${id}`, errors, latencies);
        for (const m of got) {
          const t = sentAt(m.body);
          if (t !== undefined) e2e.push(receivedAt - t);
        }
        // Iterations in flight at the deadline finish and count: the window lasts until the last worker stops.
        messages += committed;
      }
    });
  });
  return cellResult(ctx, { id, topicType: type, mode, op: 'lifecycle', batch }, window, window.seconds, messages, latencies, errors, {
    sentPerSecond: sent / window.seconds,
    endToEnd: percentiles(e2e),
  });
}

// ── latency ──────────────────────────────────────────────────────────────

export interface LatencyResult {
  id: string;
  topicType: TopicType;
  mode: Mode;
  messages: number;
  received: number;
  consumers: number;
  sendToReceive: Percentiles;
  sendRequest: Percentiles;
  /** Mean DynamoDB call time during the phase, and the CPU picture (how loaded the machine was). */
  dynamoMsPerCall?: number;
  cpu?: Window['cpu'];
}

/**
 * One producer sends `count` messages one at a time (with a short pause);
 * `consumers` long-poll (waitSeconds 2) and commit. The latency is from just
 * before the send request to the moment the receive response is parsed.
 */
export async function latency(ctx: Ctx, id: string, topic: string, group: string, type: TopicType, mode: Mode, count: number, consumers: number, maxSeconds: number): Promise<LatencyResult> {
  const errors = new Errors(50);
  const sendLatencies: number[] = [];
  const seen = new Map<string, number>();
  const ends: number[] = [];
  let producing = true;
  const deadline = performance.now() + maxSeconds * 1000;
  const consumer = async () => {
    for (let i = 0; i < 10_000 && performance.now() < deadline && (producing || seen.size < count); i++) {
      const got = await ctx.api.request<{ messages: Received[] }>('POST', `/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 2, visibilityTimeoutSeconds: 300 }, `latency:${id}`);
      const at = performance.now();
      if (!(await tolerate(errors, got))) continue;
      for (const m of got.body.messages) {
        const t = sentAt(m.body);
        if (t !== undefined && !seen.has(m.messageId)) {
          seen.set(m.messageId, at - t);
          ends.push(at - t);
        }
      }
      if (got.body.messages.length > 0) {
        void ctx.api
          .request('POST', `/v1/groups/${group}/commit`, { entries: got.body.messages.map((m) => ({ receiptHandle: m.receiptHandle })) }, `latency:${id}`)
          .catch(() => errors.add('commit'));
      }
    }
  };
  const running = Array.from({ length: consumers }, consumer);
  await sleep(200); // let the consumers park in their long polls
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    const reply = await ctx.api.request('POST', `/v1/topics/${topic}/messages`, entry(ctx, type, i), `latency:${id}`);
    sendLatencies.push(reply.ms);
    await tolerate(errors, reply);
    await sleep(5 + Math.random() * 15);
  }
  producing = false;
  await Promise.all(running);
  return { id, topicType: type, mode, messages: count, received: seen.size, consumers, sendToReceive: percentiles(ends), sendRequest: percentiles(sendLatencies) };
}

// ── scheduled delivery ───────────────────────────────────────────────────

export interface ScheduledResult {
  available: boolean;
  reason?: string;
  messages?: number;
  received?: number;
  delays?: string;
  /** received − deliverAt, ms (negative: early). */
  lateness?: Percentiles;
  early?: number;
}

/** Is scheduled delivery there? A probe send with delaySeconds 1. */
export async function probeScheduled(ctx: Ctx, topic: string): Promise<{ available: boolean; reason: string }> {
  const reply = await ctx.api.request<{ state?: string; detail?: string; code?: string }>('POST', `/v1/topics/${topic}/messages`, { body: 'probe', delaySeconds: 1 }, 'probe');
  if (reply.status === 201 && reply.body.state === 'scheduled') return { available: true, reason: 'probe send with delaySeconds 1 answered 201 scheduled' };
  return { available: false, reason: `probe send with delaySeconds answered ${reply.status} ${reply.body.code ?? ''}: ${reply.body.detail ?? JSON.stringify(reply.body)}`.trim() };
}

/** Sends `count` messages with delays 1…maxDelay s; long-polling consumers measure how late each arrives. */
export async function scheduled(ctx: Ctx, topic: string, group: string, count: number, maxDelay: number): Promise<ScheduledResult> {
  const errors = new Errors(50);
  const due = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  let sending = true;
  const deadline = Date.now() + (maxDelay + 15) * 1000 + count * 50;
  const consumer = async () => {
    for (let i = 0; i < 10_000 && Date.now() < deadline && (sending || [...due.keys()].some((id) => !receivedAt.has(id))); i++) {
      const got = await ctx.api.request<{ messages: Received[] }>('POST', `/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 2, visibilityTimeoutSeconds: 300 }, 'scheduled');
      const at = Date.now();
      if (!(await tolerate(errors, got))) continue;
      // Matched with deliverAt at the end: under load a short delay can expire before its send response arrives.
      for (const m of got.body.messages) if (!receivedAt.has(m.messageId)) receivedAt.set(m.messageId, at);
      if (got.body.messages.length > 0) {
        void ctx.api
          .request('POST', `/v1/groups/${group}/commit`, { entries: got.body.messages.map((m) => ({ receiptHandle: m.receiptHandle })) }, 'scheduled')
          .catch(() => errors.add('commit'));
      }
    }
  };
  const running = [consumer(), consumer()];
  for (let i = 0; i < count; i++) {
    const delaySeconds = 1 + (i % maxDelay);
    const before = Date.now();
    const reply = await ctx.api.request<{ messageId: string; deliverAt?: string }>('POST', `/v1/topics/${topic}/messages`, { body: messageBody(ctx.bodyBytes), delaySeconds }, 'scheduled');
    if (!(await tolerate(errors, reply))) continue;
    const at = reply.body.deliverAt ? Date.parse(reply.body.deliverAt) : before + delaySeconds * 1000;
    due.set(reply.body.messageId, Number.isFinite(at) ? at : before + delaySeconds * 1000);
    await sleep(20);
  }
  sending = false;
  await Promise.all(running);
  const lateness = [...due].flatMap(([id, when]) => {
    const at = receivedAt.get(id);
    return at === undefined ? [] : [at - when];
  });
  return {
    available: true,
    messages: due.size,
    received: lateness.length,
    delays: `1–${maxDelay} s`,
    lateness: percentiles(lateness),
    early: lateness.filter((l) => l < 0).length,
  };
}

// ── cost per message type ────────────────────────────────────────────────

export interface CostType {
  id: string;
  label: string;
  topicType: TopicType;
  mode: Mode;
  batch: number;
  /** `carry`: each receive carries the commits of the previous batch (`commit` in its body). */
  /** `push`: the group is a push group (batchSize = `batch`) whose endpoint answers 200: send, then wait until pushed and committed. */
  variant?: 'dedup+key' | 'scheduled' | 'transactional' | 'carry' | 'push';
  /** The message body (default: a realistic JSON order event). */
  body?: BodyKind;
  /**
   * FIFO shard keys (default: message n goes to shard n mod shards, so a batch of 10 spans 10 shards):
   * `per-batch` — all messages of one send share a shard (the next send the next shard);
   * `fresh` — every message a shard key never used before (prices creating a shard cursor);
   * `one` — every message on one shard key (a consumer carrying its commits folds them into that shard's claims).
   */
  shardKeys?: 'per-batch' | 'fresh' | 'one';
  /** The topic's partitions (FIFO: notice streams; more than 4 makes it wide, its ready index per notice stream). Default 4. */
  partitions?: number;
  /** A sequenced FIFO topic (`sequenced: true`): shard streams `…/q:<key>` numbered by a counter. */
  sequenced?: boolean;
}

export interface CostResult {
  type: CostType;
  messages: number;
  seconds: number;
  dynamo: ReturnType<typeof dynamoTotals>;
  /** `billedMsByRoute` is absent in results written before durations were priced per route. */
  http: Omit<ReturnType<typeof httpTotals>, 'billedMsByRoute'> & { billedMsByRoute?: Record<string, number> };
  other: Record<string, number>;
  /** By route then command: requests, WRU and RRU per message. */
  breakdown: Array<{ route: string; command: string; requests: number; wru: number; wruGsi: number; rru: number; rruMinModel: number; wruFailedModel: number }>;
  skipped?: string;
}

/**
 * Sequential lifecycles of one message type (send → receive → commit, one
 * group), after a warm-up that opens every stream the type uses (the one-time
 * epoch transaction of a new stream is not a per-message cost). One worker, so
 * no retries from contention: the per-message protocol cost.
 */
export async function costOf(ctx: Ctx, type: CostType, rounds: number, names: { topic: string; group: string; push?: PushProbe }): Promise<CostResult> {
  const tag = `cost:${type.id}`;
  const errors = new Errors(20);
  const { topic, group, push } = names;
  if (type.variant === 'push' && !push) throw new Error('a push row needs the push probe');
  let pushed = 0;
  let n = 0;
  const run = Math.random().toString(36).slice(2, 8);
  const shardKey = (i: number) =>
    type.shardKeys === 'per-batch'
      ? shardOf(ctx, Math.floor(i / type.batch))
      : type.shardKeys === 'fresh'
        ? `new-${run}-${i}`
        : type.shardKeys === 'one'
          ? shardOf(ctx, 0)
          : undefined;
  const makeEntry = (i: number) => {
    const key = type.topicType === 'fifo' ? shardKey(i) : undefined;
    const base = { ...entry(ctx, type.topicType, i, {}, type.body), ...(key !== undefined ? { shardKey: key } : {}) };
    if (type.variant === 'dedup+key') return { ...base, dedupId: `d-${i}-${Math.random().toString(36).slice(2)}`, keys: [`order-${i}`] };
    if (type.variant === 'scheduled') return { ...base, delaySeconds: 1 };
    if (type.variant === 'transactional') return { ...base, transaction: { producerGroup: `${topic}-producer` } };
    return base;
  };
  const send = async (count: number, t: string) => {
    const entries = Array.from({ length: count }, () => makeEntry(n++));
    if (count === 1) {
      const r = await ctx.api.must<{ messageId: string; transactionId?: string }>('POST', `/v1/topics/${topic}/messages`, entries[0], t, [201]);
      return [r.body];
    }
    const r = await ctx.api.must<{ results: Array<{ messageId: string; transactionId?: string; error?: unknown }> }>('POST', `/v1/topics/${topic}/messages/batch`, { entries }, t);
    const bad = r.body.results.find((x) => x.error);
    if (bad) throw new HttpError(200, bad, 'batch entry');
    return r.body.results;
  };
  /** Receives and commits `count` messages, `type.batch` per receive (what a consumer keeping up would do). */
  const consume = async (count: number, t: string) => {
    let got = 0;
    for (let attempt = 0, empty = 0; got < count && attempt < 20 + 2 * count; attempt++) {
      const r = await receiveAndCommit(ctx, group, Math.min(type.batch, count - got), empty === 0 ? 0 : 1, t, errors, []);
      got += r.committed;
      empty = r.messages.length === 0 ? empty + 1 : 0;
      if (empty > 10) break;
    }
    if (got < count) throw new Error(`received ${got} of ${count} messages`);
  };
  /** Like `consume`, but each receive commits the previous batch (`commit: [...]`); `flush` commits the last one. */
  let carried: string[] = [];
  const consumeCarrying = async (count: number, t: string) => {
    let got = 0;
    for (let attempt = 0, empty = 0; got < count && attempt < 20 + 2 * count; attempt++) {
      const body = { maxMessages: Math.min(type.batch, count - got), waitSeconds: empty === 0 ? 0 : 1, visibilityTimeoutSeconds: 300, ...(carried.length ? { commit: carried } : {}) };
      const r = await ctx.api.request<{ messages: Array<{ receiptHandle: string }>; commitResults?: Array<{ status?: string; error?: unknown }> }>('POST', `/v1/groups/${group}/receive`, body, t);
      if (!(await tolerate(errors, r))) continue;
      for (const c of r.body.commitResults ?? []) if (c.status !== 'committed') errors.add(`commit:${JSON.stringify(c.error).slice(0, 60)}`);
      carried = r.body.messages.map((m) => m.receiptHandle);
      got += r.body.messages.length;
      empty = r.body.messages.length === 0 ? empty + 1 : 0;
      if (empty > 10) break;
    }
    if (got < count) throw new Error(`received ${got} of ${count} messages`);
  };
  const flush = async (t: string) => {
    if (carried.length === 0) return;
    await ctx.api.must('POST', `/v1/groups/${group}/commit`, { entries: carried.map((receiptHandle) => ({ receiptHandle })) }, t);
    carried = [];
  };
  const lifecycle = async (count: number, t: string) => {
    const sent = await send(count, t);
    if (type.variant === 'transactional') {
      for (const s of sent) await ctx.api.must('POST', `/v1/transactions/${s.transactionId ?? ''}/commit`, {}, t, [200]);
    }
    if (type.variant === 'carry') await consumeCarrying(count, t);
    else if (type.variant === 'push') await push?.delivered((pushed += count));
    else if (type.variant !== 'scheduled') await consume(count, t);
  };

  // Warm-up: every partition / shard / notice stream the type touches gets its first segment.
  // Standard: enough lifecycles that each of the 4 random partitions is opened (miss chance 4 × 0.75^40 ≈ 4e-5).
  // FIFO: every shard the measured sends use (shards of 10 messages each with `per-batch`; `fresh` opens
  // only the notice streams: its measured shards are new by design).
  const warm = type.topicType === 'fifo' ? ctx.shards * (type.shardKeys === 'per-batch' ? type.batch : 1) : 40;
  if (type.variant === 'scheduled') {
    for (let i = 0; i < 4; i++) await lifecycle(1, `${tag}:warmup`);
    await sleep(1600);
    await consume(4, `${tag}:warmup`);
  } else if (type.topicType === 'fifo') {
    const saved = n;
    n = 0;
    for (let i = 0; i < warm; i++) await send(1, `${tag}:warmup`);
    await consume(warm, `${tag}:warmup`);
    n = Math.max(saved, warm);
    if (type.shardKeys === 'per-batch') n = Math.ceil(n / type.batch) * type.batch; // sends start on a shard boundary
    // Later messages continue the shard rotation where the warm-up ended.
  } else {
    for (let i = 0; i < warm; i++) await lifecycle(1, `${tag}:warmup`);
    await flush(`${tag}:warmup`);
    await push?.settled();
  }

  const { window } = await measured(ctx, async () => {
    if (type.variant === 'scheduled') {
      for (let r = 0; r < rounds; r++) await lifecycle(type.batch, tag);
      await sleep(1700);
      await consume(rounds * type.batch, tag);
      return;
    }
    for (let r = 0; r < rounds; r++) await lifecycle(type.batch, tag);
    await flush(tag); // the last batch's commit, counted
    await push?.settled(); // a push drain's last (empty) claim, counted
  });
  const messages = rounds * type.batch;
  // Everything in the window counts: the type's own requests and any background work it caused.
  const counted = window.counted;
  const breakdown = new Map<string, CostResult['breakdown'][number]>();
  for (const [key, c] of Object.entries(counted.dynamo)) {
    const [, route = '?', command = '?'] = key.split('|');
    const k = `${route}|${command}`;
    const b = breakdown.get(k) ?? { route, command, requests: 0, wru: 0, wruGsi: 0, rru: 0, rruMinModel: 0, wruFailedModel: 0 };
    b.requests += c.calls / messages;
    b.wru += (c.wruTable + c.wruGsi) / messages;
    b.wruGsi += c.wruGsi / messages;
    b.rru += c.rru / messages;
    b.rruMinModel += c.rruMinModel / messages;
    b.wruFailedModel += c.wruFailedModel / messages;
    breakdown.set(k, b);
  }
  return {
    type,
    messages,
    seconds: window.seconds,
    dynamo: dynamoTotals(counted),
    http: httpTotals(counted),
    other: counted.other,
    breakdown: [...breakdown.values()].sort((a, b) => b.wru + b.rru - (a.wru + a.rru)),
  };
}
