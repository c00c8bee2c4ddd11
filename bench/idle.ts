/**
 * The `idle` and `wake` rows (issue 15): what one idle consumer costs a month
 * on AWS, from the calls counted while it idles on the local runtime, and how
 * long a send takes to reach a push endpoint or an SDK `Consumer`'s handler
 * through DynamoDB Local's real stream.
 *
 * Pull consumers receive from an {@link startAwsModeReceiver} endpoint: the
 * long poll waits on the activity items as on AWS (`SLUICE_NOTIFIER=activity`),
 * not on the local runtime's in-process notifier.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SluiceClient } from '../lib/client/client.js';
import { Consumer } from '../lib/client/consumer.js';
import { diff, type Meter, type Snapshot } from './meter.js';
import { dynamoTotals, httpTotals, type Ctx } from './workloads.js';
import { idleRow, type IdleCounts, type IdleId, type IdleRow, type WakeRow } from './idle-cost.js';
import { percentiles, sleep } from './stats.js';
import { itemBytes, type AttributeMap } from './units.js';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startAwsModeReceiver, type AwsModeReceiver } from './aws-mode-receiver.js';
import { startBenchSqs } from './doorbell-sqs.js';
import { container } from '../functions/commons/container.js';
import { DOORBELL_RECEIVE_EVERY_MS } from '../lib/client/consumer.js';
import { QUIET_READ_EVERY_MS } from '../lib/adapters/dynamodb/ready-horizon.js';
import { readyIndexPk } from '../lib/adapters/dynamodb/keys.js';
import { indexUnit } from './key-units.js';

/** The SDK consumer's doorbell on the bench's SQS stand-in: any credentials do. */
const BENCH_DOORBELL = { credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' }, region: 'us-east-1' };

/** What a window of `meter` counted, as idle counts. */
function countsOf(window: Snapshot, seconds: number, storageBytes: number, tagFilter?: (tag: string) => boolean): { counts: IdleCounts; byCommand: Record<string, number> } {
  const d = dynamoTotals(window, tagFilter);
  const h = httpTotals(window, tagFilter);
  return {
    counts: {
      seconds,
      dynamoCalls: d.requests,
      rru: d.rru + d.rruMinModel,
      wru: d.wruTable + d.wruGsi + d.wruFailedModel,
      lambdaRequests: h.requests,
      lambdaBilledMs: h.billedMs,
      storageBytes,
    },
    byCommand: d.byCommand,
  };
}

/**
 * Bytes a group keeps in the table, as DynamoDB bills storage (each item's
 * size + 100 B): the group item and every item whose key names the group
 * (cursors, ready index, pending outputs, history). A Scan: bench only.
 */
export async function groupStorageBytes(doc: DynamoDBDocumentClient, table: string, group: string): Promise<number> {
  let bytes = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      const pk = String(item.pk ?? '');
      const sk = String(item.sk ?? '');
      if ((pk === 'GROUP' && sk === group) || pk.split('#')[1] === group) bytes += itemBytes(marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true }) as AttributeMap) + 100;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return bytes;
}

/** A local push endpoint: answers 200 to every request and tells who waits that one arrived. */
async function startPushEndpoint(): Promise<{ url: string; next(): Promise<number>; requests(): number; stop(): Promise<void> }> {
  let count = 0;
  let waiting: ((at: number) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const at = Date.now();
    count++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const w = waiting;
    waiting = undefined;
    w?.(at);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    next: () => new Promise<number>((resolve) => (waiting = resolve)),
    requests: () => count,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface IdleProfile {
  /** 20 s polls before the window (the first one parks). */
  warmupPolls: number;
  /** 20 s polls measured. */
  measuredPolls: number;
  /** Wake samples per row. */
  wakeSamples: number;
}

export interface IdleEnv {
  ctx: Ctx;
  runtimeUrl: string;
  token: string;
  /** The local runtime's meter (the push group's idle calls). */
  meter: Meter;
  doc: DynamoDBDocumentClient;
  table: string;
  /** The local runtime's DynamoDB client (watched for calls that name the idle push group or its topic). */
  dynamo: { middlewareStack: { add: (...args: any[]) => void; remove: (name: string) => boolean } };
}

/**
 * Counts, on `client`, the calls whose input names `names` (the push group's
 * keys: its group item, cursors, ready index, its topic's items): what the
 * group itself asks of the table, apart from the runtime's sweeps.
 */
function watchCalls(client: IdleEnv['dynamo'], names: string[]): { calls: () => Record<string, number>; stop: () => void } {
  const calls: Record<string, number> = {};
  const name = `idle-watch-${names.join('-')}`;
  client.middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: { input: unknown }) => {
      const text = JSON.stringify(args.input);
      if (names.some((n) => text.includes(n))) {
        const command = (context.commandName ?? '?').replace(/Command$/, '');
        calls[command] = (calls[command] ?? 0) + 1;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { calls: () => ({ ...calls }), stop: () => void client.middlewareStack.remove(name) };
}

const WAIT_SECONDS = 20;

/**
 * The curl-style rows: a long poll one after the other, each on its own topic and its own
 * AWS-mode receive endpoint (a container of its own, so each row's calls are counted apart).
 * The FIFO rows price what a FIFO receive reads at each real look: its notice streams' cursors
 * and notices, and the ready index — the home key `R#<group>` on a default topic, and the 16
 * bucket keys besides on a wide one (more than 4 notice streams), 64 on a 256-stream one
 * (docs/design.md, Ready index, "How many buckets").
 */
export const LONG_POLL_ROWS = [
  { id: 'http-long-poll', topic: 'idle-http', body: { type: 'standard' }, what: 'a standard topic (4 partitions)' },
  { id: 'http-long-poll-fifo', topic: 'idle-fifo', body: { type: 'fifo' }, what: 'a FIFO topic, 4 notice streams (the default): the ready index under the home key' },
  { id: 'http-long-poll-fifo-wide', topic: 'idle-fifo-wide', body: { type: 'fifo', partitions: 16 }, what: 'a wide FIFO topic, 16 notice streams (`partitions: 16`): the ready index under the home key and the 16 bucket keys' },
  { id: 'http-long-poll-fifo-p256', topic: 'idle-fifo-p256', body: { type: 'fifo', partitions: 256 }, what: 'a FIFO topic of 256 notice streams (`partitions: 256`): the ready index under the home key and the 64 bucket keys' },
] as const satisfies ReadonlyArray<{ id: IdleId; topic: string; body: Record<string, unknown>; what: string }>;

/**
 * A curl consumer: `warmupPolls + measuredPolls` long polls of `group` one after the other; the last
 * `measuredPolls` counted (`window`), the first ones too (`warmup`: the thorough read of the ready
 * index a wide group's quiet looks skip, ready-horizon.ts, is there).
 */
export async function longPollWindow(
  receiver: AwsModeReceiver,
  group: string,
  profile: Pick<IdleProfile, 'warmupPolls' | 'measuredPolls'>,
  waitSeconds = WAIT_SECONDS,
): Promise<{ window: Snapshot; seconds: number; warmup: Snapshot }> {
  const polls = profile.warmupPolls + profile.measuredPolls;
  const start = receiver.meter.snapshot();
  let before = start;
  let warmup = diff(start, start);
  let t0 = performance.now();
  for (let i = 0; i < polls; i++) {
    if (i === profile.warmupPolls) {
      before = receiver.meter.snapshot();
      warmup = diff(before, start);
      t0 = performance.now();
    }
    const res = await fetch(`${receiver.url}/v1/groups/${encodeURIComponent(group)}/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(receiver.token ? { authorization: `Bearer ${receiver.token}` } : {}) },
      body: JSON.stringify({ maxMessages: 10, waitSeconds }),
    });
    const got = (await res.json()) as { messages?: unknown[] };
    if (res.status !== 200 || (got.messages?.length ?? 0) > 0) throw new Error(`idle long poll of ${group} answered ${res.status} with ${got.messages?.length ?? 0} messages`);
  }
  return { window: diff(receiver.meter.snapshot(), before), seconds: (performance.now() - t0) / 1000, warmup };
}

/** The reads of `group`'s ready index in a snapshot: read units and Queries on its keys (`gsi1 R#<group>` and its buckets), and reads of its home key. */
export function readyIndexReads(snapshot: Snapshot, group: string): { rru: number; queries: number; homeReads: number } {
  const out = { rru: 0, queries: 0, homeReads: 0 };
  for (const [key, counter] of Object.entries(snapshot.keys)) {
    const unit = key.slice(key.indexOf('|') + 1);
    const home = indexUnit(readyIndexPk(group));
    if (unit !== home && !unit.startsWith(`${home}#`)) continue;
    out.rru += counter.rcu;
    out.queries += counter.reads;
    if (unit === home) out.homeReads += counter.reads;
  }
  return out;
}

/** One thorough read of `group`'s ready index as `warmup` measured it (each reads the home key once); undefined when it read none. */
export function thoroughReadOf(warmup: Snapshot, group: string): { rru: number; queries: number } | undefined {
  const { rru, queries, homeReads } = readyIndexReads(warmup, group);
  return homeReads > 0 ? { rru: rru / homeReads, queries: queries / homeReads } : undefined;
}

/**
 * The idle rows, measured at the same time on their own topics: curl-style long polls (a
 * standard, a FIFO and a wide FIFO topic) and an SDK `Consumer` against their own AWS-mode
 * receive endpoints, and a push group whose idle window is everything the local runtime called
 * meanwhile (an upper bound: timer sweeps included).
 */
export async function measureIdle(env: IdleEnv, profile: IdleProfile): Promise<IdleRow[]> {
  const { api } = env.ctx;
  for (const row of LONG_POLL_ROWS) {
    await api.put(`/v1/topics/${row.topic}`, row.body);
    await api.put(`/v1/groups/${row.topic}-g`, { subscriptions: [{ topic: row.topic }], visibilityTimeoutSeconds: 30 });
  }
  for (const t of ['idle-sdk', 'idle-push']) await api.put(`/v1/topics/${t}`, { type: 'standard' });
  await api.put('/v1/groups/idle-sdk-g', { subscriptions: [{ topic: 'idle-sdk' }], visibilityTimeoutSeconds: 30 });
  const endpoint = await startPushEndpoint();
  await api.put('/v1/groups/idle-push-g', { subscriptions: [{ topic: 'idle-push' }], push: { url: endpoint.url } });
  const pollReceivers: AwsModeReceiver[] = [];
  while (pollReceivers.length < LONG_POLL_ROWS.length) pollReceivers.push(await startAwsModeReceiver(env.runtimeUrl, env.token));
  const sqs = await startBenchSqs();
  const sdkReceiver = await startAwsModeReceiver(env.runtimeUrl, env.token, { doorbellQueues: sqs.doorbellQueues });
  try {
    const curl = () => Promise.all(LONG_POLL_ROWS.map((row, i) => longPollWindow(pollReceivers[i] as AwsModeReceiver, `${row.topic}-g`, profile)));
    // The SDK Consumer on its group's doorbell: its parking receive (measured alone: what each 5-minute
    // receive costs, at most), then a window of doorbell long polls.
    const sdk = async () => {
      const client = new SluiceClient({ endpoint: sdkReceiver.url, token: env.token });
      let handled = 0;
      const beforePark = sdkReceiver.meter.snapshot();
      const consumer = new Consumer(client, { group: 'idle-sdk-g', handler: () => void handled++, waitSeconds: WAIT_SECONDS, onError: () => undefined, doorbell: BENCH_DOORBELL });
      await consumer.start();
      try {
        while ((sqs.requests().ReceiveMessage ?? 0) < 1) await sleep(20);
        const park = diff(sdkReceiver.meter.snapshot(), beforePark);
        const before = sdkReceiver.meter.snapshot();
        const sqsBefore = sqs.requests();
        const t0 = performance.now();
        await sleep(WAIT_SECONDS * 1000 * profile.measuredPolls + 1000);
        const window = diff(sdkReceiver.meter.snapshot(), before);
        const sqsAfter = sqs.requests();
        const seconds = (performance.now() - t0) / 1000;
        if (handled > 0) throw new Error(`the idle SDK consumer handled ${handled} messages`);
        const sqsRequests = Object.entries(sqsAfter).reduce((sum, [action, n]) => sum + n - (sqsBefore[action] ?? 0), 0);
        // What each 5-minute receive costs once the group is parked (the park in force, the queue recorded):
        // one `park: true` receive, answered with the doorbell. The first one above also created the queue and,
        // being a fresh park, long-polled past the senders' catalog cache: measured, but not what repeats.
        const beforeSteady = sdkReceiver.meter.snapshot();
        const again = await client.receiveAndCommit('idle-sdk-g', [], { maxMessages: 10, waitSeconds: WAIT_SECONDS, park: true });
        if (again.messages.length > 0 || !again.doorbell) throw new Error('the steady parking receive did not answer the doorbell');
        const steady = diff(sdkReceiver.meter.snapshot(), beforeSteady);
        return { window, seconds, park, steady, sqsRequests, sqsByAction: Object.fromEntries(Object.entries(sqsAfter).map(([a, n]) => [a, n - (sqsBefore[a] ?? 0)])) };
      } finally {
        await consumer.stop({ abort: true });
      }
    };
    // The push group: the calls of the local runtime that name it or its topic over the same span.
    const push = async () => {
      await sleep(WAIT_SECONDS * 1000 * profile.warmupPolls);
      const before = env.meter.snapshot();
      const watch = watchCalls(env.dynamo, ['idle-push']);
      const t0 = performance.now();
      try {
        await sleep(WAIT_SECONDS * 1000 * profile.measuredPolls);
      } finally {
        watch.stop();
      }
      return { window: diff(env.meter.snapshot(), before), seconds: (performance.now() - t0) / 1000, own: watch.calls() };
    };
    const [polls, s, p] = await Promise.all([curl(), sdk(), push()]);
    const pushStorage = await groupStorageBytes(env.doc, env.table, 'idle-push-g');
    const rows: IdleRow[] = [];
    LONG_POLL_ROWS.forEach((row, i) => {
      const c = polls[i] as { window: Snapshot; seconds: number; warmup: Snapshot };
      const cc = countsOf(c.window, c.seconds, 0);
      // A wide group's quiet looks read its horizon instead of its ready index (ready-horizon.ts), and
      // the whole index again every QUIET_READ_EVERY_MS, which a window of a few polls may not hold:
      // priced at the share of the window's time, as the warmup's thorough read measured it.
      const wide = 'partitions' in row.body;
      const thorough = wide ? thoroughReadOf(c.warmup, `${row.topic}-g`) : undefined;
      const share = thorough ? (c.seconds * 1000) / QUIET_READ_EVERY_MS : 0;
      const windowQueries = wide ? readyIndexReads(c.window, `${row.topic}-g`).queries : 0;
      const counts = thorough ? { ...cc.counts, rru: cc.counts.rru + thorough.rru * share, dynamoCalls: cc.counts.dynamoCalls + thorough.queries * share } : cc.counts;
      rows.push(
        idleRow(
          row.id,
          counts,
          cc.byCommand,
          `curl-style on ${row.what}: POST receive waitSeconds ${WAIT_SECONDS}, one after the other, SLUICE_NOTIFIER=activity; ${profile.measuredPolls} polls after ${profile.warmupPolls} (the first parks); the receive route's handler run in the receiver's own container behind a plain HTTP server, Lambda billed per request as timed there` +
            (thorough
              ? `; the group quiet, its looks read the ready index's horizon instead of its ${thorough.queries} keys (${windowQueries > 0 ? `the window's looks made ${windowQueries} of its Queries` : 'none read in the window'}), plus the thorough read every ${QUIET_READ_EVERY_MS / 60_000} min priced at the window's share (${share.toFixed(3)} × ${thorough.queries} Queries, ${thorough.rru.toFixed(1)} RRU, as the warmup measured it)`
              : ''),
        ),
      );
    });
    // The window's own calls (doorbell long polls; receives only if one fell in it) plus the real receive
    // every 5 minutes, priced as a parking receive measured alone once the park is in force (the first one,
    // which created the queue and held a fresh park, is in the note).
    const sw = countsOf(s.window, s.seconds, 0);
    const sp = countsOf(s.steady, 0, 0);
    const PARK_REFRESH_WRU = 1;
    const first = countsOf(s.park, 0, 0);
    const share = (s.seconds * 1000) / DOORBELL_RECEIVE_EVERY_MS;
    const sdkCounts: IdleCounts = {
      seconds: s.seconds,
      dynamoCalls: sw.counts.dynamoCalls + sp.counts.dynamoCalls * share,
      rru: sw.counts.rru + sp.counts.rru * share,
      // Each 5-minute receive also refreshes the park (older than 3 min by then): one write of the group's one topic item.
      wru: sw.counts.wru + (sp.counts.wru + PARK_REFRESH_WRU) * share,
      lambdaRequests: sw.counts.lambdaRequests + sp.counts.lambdaRequests * share,
      lambdaBilledMs: sw.counts.lambdaBilledMs + sp.counts.lambdaBilledMs * share,
      storageBytes: 0,
      sqsRequests: s.sqsRequests,
    };
    rows.push(
      idleRow(
        'sdk-consumer',
        sdkCounts,
        sw.byCommand,
        `the SDK Consumer parked on its group's SQS doorbell (a local stand-in speaking SQS's JSON protocol, requests priced as SQS standard): ` +
          `${JSON.stringify(s.sqsByAction)} SQS requests in the window; plus a real receive (park: true) every ${DOORBELL_RECEIVE_EVERY_MS / 60_000} min, ` +
          `priced as a parking receive measured alone with the park in force (${sp.counts.lambdaRequests} HTTP request, ${Math.round(sp.counts.lambdaBilledMs)} billed ms, ` +
          `${sp.counts.rru.toFixed(1)} RRU, ${sp.counts.wru.toFixed(1)} WRU, ${JSON.stringify(sp.byCommand)}; plus ${PARK_REFRESH_WRU} WRU for the park refresh each of them writes to the one topic item); ` +
          `the consumer's first parking receive, which created and recorded the queue and held the fresh park past the senders' cache: ` +
          `${first.counts.lambdaRequests} HTTP requests incl. GET group and GET of each subscribed topic (its time-order group), ${Math.round(first.counts.lambdaBilledMs)} billed ms, ${first.counts.rru.toFixed(1)} RRU, ${first.counts.wru.toFixed(1)} WRU ` +
          `(a doorbell SQS deleted after 30 days without a consumer costs one such receive again, \`doorbellMissing\`, when a consumer comes back: not a monthly cost); ` +
          `window receives: ${sw.counts.lambdaRequests}`,
      ),
    );
    // Priced: only the calls that name the group or its topic; the runtime's other calls in the window (the timer
    // and check-back sweeps, run whatever the groups) are listed in the note, not priced.
    const own = Object.values(p.own).reduce((a, b) => a + b, 0);
    const runtimeWide = dynamoTotals(p.window);
    // Calls of its own (none expected) are not told apart by unit: then the whole window is priced, an upper bound.
    const pc = countsOf(p.window, p.seconds, pushStorage, own > 0 ? undefined : () => false);
    rows.push(
      idleRow(
        'push-group',
        pc.counts,
        p.own,
        `a push group on its own idle topic: ${own} DynamoDB calls named the group or its topic in the window, ${endpoint.requests()} push requests were made; ` +
          (own > 0
            ? `priced: every call of the local runtime in the window (${runtimeWide.requests}, ${JSON.stringify(runtimeWide.byCommand)}), an upper bound, plus its ${pushStorage} B of items`
            : `its cost is its ${pushStorage} B of items. The local runtime made ${runtimeWide.requests} other calls meanwhile (${JSON.stringify(runtimeWide.byCommand)}), ` +
              `none naming the group or its topic: background work such as its periodic timer and check-back sweeps, which run whatever the groups; not priced here)`),
      ),
    );
    return rows;
  } finally {
    for (const r of pollReceivers) await r.stop();
    await sdkReceiver.stop();
    await sqs.stop();
    await endpoint.stop();
  }
}

/** A pause of 0.3–2.5 s: the consumer idles between sends, so the activity waiter's back-off is sampled. */
const idleGap = () => 300 + Math.random() * 2200;

/**
 * The wake rows, each send alone (the next once the last arrived): send →
 * push request received by a local http endpoint, and send → an SDK
 * `Consumer`'s handler called (receiving from an AWS-mode endpoint).
 */
export async function measureWake(env: IdleEnv, profile: IdleProfile): Promise<WakeRow[]> {
  const { api } = env.ctx;
  const endpoint = await startPushEndpoint();
  const sqs = await startBenchSqs();
  const receiver = await startAwsModeReceiver(env.runtimeUrl, env.token, { doorbellQueues: sqs.doorbellQueues });
  const limitMs = 15_000;
  const timeout = () => sleep(limitMs).then(() => -1);
  try {
    await api.put('/v1/topics/wake-push', { type: 'standard' });
    await api.put('/v1/groups/wake-push-g', { subscriptions: [{ topic: 'wake-push' }], push: { url: endpoint.url } });
    await api.put('/v1/topics/wake-sdk', { type: 'standard' });
    await api.put('/v1/groups/wake-sdk-g', { subscriptions: [{ topic: 'wake-sdk' }], visibilityTimeoutSeconds: 30 });
    const send = (topic: string, i: number) => api.must('POST', `/v1/topics/${topic}/messages`, { body: JSON.stringify({ i }) }, 'wake');

    const pushRow = async (): Promise<WakeRow> => {
      const ms: number[] = [];
      let lost = 0;
      for (let i = 0; i < profile.wakeSamples; i++) {
        await sleep(idleGap());
        const arrived = Promise.race([endpoint.next(), timeout()]);
        const sentAt = Date.now();
        await send('wake-push', i);
        const at = await arrived;
        if (at < 0) lost++;
        else ms.push(at - sentAt);
      }
      const p = percentiles(ms);
      return { id: 'push-group', samples: ms.length, p50: p.p50, p95: p.p95, p99: p.p99, max: p.max, note: `send → request at a local http endpoint (dispatcher on DynamoDB Local's stream → push queue → worker), one send at a time after 0.3–2.5 s idle${lost ? `; ${lost} not arrived within ${limitMs} ms` : ''}` };
    };

    const sdkRow = async (): Promise<WakeRow> => {
      let handled: ((at: number) => void) | undefined;
      const client = new SluiceClient({ endpoint: receiver.url, token: env.token });
      const { localDoorbell } = container();
      if (!localDoorbell) throw new Error('the local runtime has no in-process doorbell');
      const stopForwarding = sqs.forwardRings(localDoorbell, 'wake-sdk-g');
      const consumer = new Consumer(client, {
        group: 'wake-sdk-g',
        waitSeconds: WAIT_SECONDS,
        doorbell: BENCH_DOORBELL,
        onError: () => undefined,
        handler: () => {
          const h = handled;
          handled = undefined;
          h?.(Date.now());
        },
      });
      await consumer.start();
      const ms: number[] = [];
      let lost = 0;
      try {
        // Past the park and the sender's catalog cache (5 s): appends carry `w` from here on.
        await sleep(6000);
        for (let i = 0; i < profile.wakeSamples; i++) {
          await sleep(idleGap());
          const arrived = Promise.race([new Promise<number>((resolve) => (handled = resolve)), timeout()]);
          const sentAt = Date.now();
          await send('wake-sdk', i);
          const at = await arrived;
          if (at < 0) lost++;
          else ms.push(at - sentAt);
        }
      } finally {
        await consumer.stop({ abort: true });
        stopForwarding();
      }
      const p = percentiles(ms);
      return { id: 'sdk-consumer', samples: ms.length, p50: p.p50, p95: p.p95, p99: p.p99, max: p.max, note: `send → handler called; the Consumer parked on its group's doorbell (SQS stand-in, long poll 20 s), rung by the dispatcher's DoorbellRoute on DynamoDB Local's stream (in-process, passed on as one SendMessage), then an AWS-mode receive; one send at a time after 0.3–2.5 s idle${lost ? `; ${lost} not handled within ${limitMs} ms` : ''}` };
    };

    return await Promise.all([pushRow(), sdkRow()]);
  } finally {
    await receiver.stop();
    await sqs.stop();
    await endpoint.stop();
  }
}
