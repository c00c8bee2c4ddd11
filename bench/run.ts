/**
 * `npm run bench [-- --quick] [-- --concurrency N] [-- --out DIR]`
 *
 * Starts a fresh in-memory DynamoDB Local and the local runtime in this
 * process, then measures in one run: the raw DynamoDB Local floor, HTTP
 * throughput by mode, send→receive latency, scheduled lateness (when the
 * server offers it) and the requests, capacity units and modelled AWS cost
 * per message type. Writes bench/results/<date>-<mode>.{json,md,png}.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createDynamoClients } from '../lib/adapters/dynamodb/client.js';
import { ensureTable } from '../lib/adapters/dynamodb/table.js';
import { container } from '../functions/commons/container.js';
import { routes } from '../functions/api/routes.js';
import { startDynamoLocal, type LocalDynamo } from '../local/dynamo.js';
import { startLocal, type LocalRuntime } from '../local/runtime.js';
import { Api } from './http.js';
import { Meter } from './meter.js';
import { itemReader } from './transaction-units.js';
import { cpuSeconds, sleep } from './stats.js';
import { renderChart } from './chart.js';
import { RoundTrip } from './round-trip.js';
import { startClientContainers, type ClientContainers } from './client-containers.js';
import { SCALE_TOPICS, scaleRows, type ScaleRow, type ScaleTopic } from './scale.js';
import { receiveSection, scaleSection } from './scale-report.js';
import { RECEIVE_TOPICS, receiveRows, type ReceiveRow, type ReceiveTopic } from './scale-receive.js';
import { buildReport, renderMarkdown, type BenchResults } from './report.js';
import { measureIdle, measureWake, type IdleEnv } from './idle.js';
import type { IdleRow, WakeRow } from './idle-cost.js';
import { idleSection, idleTargets, usdSmall } from './idle-report.js';
import { startPushProbe, type PushProbe } from './push-cost.js';
import {
  FIFO_MODES,
  costOf,
  measured,
  warmUp,
  drainCell,
  floor,
  latency,
  lifecycleCell,
  probeScheduled,
  scheduled,
  sendCell,
  type CellResult,
  type CostResult,
  type CostType,
  type Ctx,
  type FloorResult,
  type LatencyResult,
  type ScheduledResult,
} from './workloads.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string' },
    'wait-quiet': { type: 'string', default: '0' },
    'cost-only': { type: 'string' },
    'idle-only': { type: 'boolean', default: false },
    'scale-only': { type: 'string' },
    'shared-container': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

if (values.help) {
  console.log('Usage: npm run bench [-- --quick] [-- --concurrency N] [-- --out DIR] [-- --wait-quiet SECONDS]');
  console.log('  --wait-quiet S  wait up to S seconds for other processes to leave the CPUs idle before starting');
  console.log('  --cost-only IDS only the cost rows named (comma-separated row ids, or "all"), printed, no result files: a quick check of a change');
  console.log('  --idle-only     only the idle and wake rows, printed; result files <date>-idle-<mode>.{json,md,png} only with --out');
  console.log(`  --scale-only TOPICS only the scale rows of the topics named (comma-separated: ${SCALE_TOPICS.join(', ')}; or "all"), printed; result files <date>-scale-<mode>.{json,md} only with --out`);
  console.log(`                  a topic name runs its producer rows and, for ${RECEIVE_TOPICS.join(', ')}, its consumer rows; send:<topic> / receive:<topic> one side; "send" / "receive" one side of every topic`);
  console.log('  --shared-container  the scale rows\' producers and consumers all use the local runtime (one container), not a container each as on AWS');
  process.exit(0);
}

const quick = values.quick === true;
/** Cost rows to measure alone (no other phase, no result files), or undefined for a whole run. */
/** Only the idle and wake rows (no other phase; result files only with --out). */
const idleOnly = values['idle-only'] === true;
const costOnly = values['cost-only']?.split(',').map((id) => id.trim()).filter(Boolean);
/** Only the scale rows of these topics (no other phase; result files only with --out). */
const scaleOnly = values['scale-only']?.split(',').map((id) => id.trim()).filter(Boolean);
/** A selector of --scale-only: `all`, `send`, `receive`, a topic (both sides), `send:<topic>`, `receive:<topic>`. */
const selects = (side: 'send' | 'receive', topic: string) => (s: string) => s === 'all' || s === side || s === topic || s === `${side}:${topic}`;
const scaleTopics: readonly ScaleTopic[] = scaleOnly === undefined ? SCALE_TOPICS : SCALE_TOPICS.filter((t) => scaleOnly.some(selects('send', t)));
const receiveTopics: readonly ReceiveTopic[] = scaleOnly === undefined ? RECEIVE_TOPICS : RECEIVE_TOPICS.filter((t) => scaleOnly.some(selects('receive', t)));
const knownSelector = (s: string) => SCALE_TOPICS.some((t) => selects('send', t)(s)) || RECEIVE_TOPICS.some((t) => selects('receive', t)(s));
if (scaleOnly !== undefined && (scaleTopics.length + receiveTopics.length === 0 || scaleOnly.some((s) => !knownSelector(s)))) {
  console.error(`--scale-only takes a comma-separated list of ${SCALE_TOPICS.join(', ')}, send:<topic>, receive:<${RECEIVE_TOPICS.join('|')}>, send, receive (or "all")`);
  process.exit(2);
}
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
  console.error('--concurrency must be an integer from 1 to 64');
  process.exit(2);
}

/** Time and counts per mode: quick is about a minute, full a few minutes on 2 cores. */
const PROFILE = quick
  ? { shards: 16, fifoBatches: [1], cellSeconds: 1, floorSeconds: 2, floorWarmupSeconds: 2, pairedFloorSeconds: 0.5, latencyStandard: 60, latencyFifo: 40, scheduledCount: 30, scheduledMaxDelay: 8, costRounds: { 1: 10, 10: 2, 100: 1 } as Record<number, number>, costShards: 8, scale: { producers: [1, 16, 64], wideProducers: [128, 256], batches: [1, 10], seconds: 1.5, shardKeys: 256, wideFifo: { shardKeys: 2048, seconds: 4 } }, receive: { consumers: [1, 16, 64], wideConsumers: [256], batches: [1, 10], carriedBatches: [10], seconds: 1.5, shardKeys: 256, maxBacklog: 20_000, steadySeconds: { 1: 4, 10: 3 } as Record<number, number>, minMessages: 60, minBatches: 10, maxSeconds: 6 }, idle: { warmupPolls: 1, measuredPolls: 2, wakeSamples: 20 }, watchdogSeconds: 900 }
  : { shards: 64, fifoBatches: [1, 10, 100], cellSeconds: 5, floorSeconds: 8, floorWarmupSeconds: 6, pairedFloorSeconds: 2, latencyStandard: 300, latencyFifo: 150, scheduledCount: 150, scheduledMaxDelay: 30, costRounds: { 1: 60, 10: 12, 100: 3 } as Record<number, number>, costShards: 16, scale: { producers: [1, 4, 16, 64], wideProducers: [128, 256], batches: [1, 10], seconds: 4, shardKeys: 1000, wideFifo: { shardKeys: 10_000, seconds: 16 } }, receive: { consumers: [1, 4, 16, 64], wideConsumers: [256], batches: [1, 10], carriedBatches: [10], seconds: 4, shardKeys: 1000, maxBacklog: 60_000, steadySeconds: { 1: 25, 10: 6 } as Record<number, number>, minMessages: 200, minBatches: 100, maxSeconds: 30 }, idle: { warmupPolls: 1, measuredPolls: 6, wakeSamples: 60 }, watchdogSeconds: 3000 };
const BATCHES = [1, 10, 100];
const BODY_BYTES = 1024;
const SHARDS = PROFILE.shards;

const mode = quick ? 'quick' : 'full';
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s`;
const log = (line: string) => console.log(`${elapsed()}  ${line}`);

let dynamo: LocalDynamo | undefined;
let runtime: LocalRuntime | undefined;
let clients: ClientContainers | undefined;
const stopAll = async () => {
  await clients?.stop().catch(() => undefined);
  await runtime?.stop().catch(() => undefined);
  await dynamo?.stop().catch(() => undefined);
};

/** Every loop is bounded; this is the last resort if something hangs anyway. */
function armWatchdog() {
  setTimeout(() => {
    console.error(`bench: still running after ${PROFILE.watchdogSeconds} s; giving up.`);
    void stopAll().finally(() => process.exit(1));
  }, PROFILE.watchdogSeconds * 1000).unref();
}
process.once('SIGINT', () => {
  console.error('\nbench: interrupted, stopping DynamoDB Local...');
  void stopAll().then(() => process.exit(130));
});

/** Cores kept busy by other processes over one second (the benchmark has not started anything yet). */
async function busyElsewhere(): Promise<number> {
  const a = cpuSeconds(undefined);
  await sleep(1000);
  const b = cpuSeconds(undefined);
  return a.machine !== undefined && b.machine !== undefined ? Math.max(0, b.machine - a.machine - (b.self - a.self)) : 0;
}

const compiledRoutes = routes.map((r) => ({
  name: r.entry,
  method: r.method,
  pattern: new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
}));
const routeOf = (method: string, path: string) =>
  compiledRoutes.find((r) => r.method === method && r.pattern.test(path))?.name ?? `${method} (unrouted)`;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function describeCell(c: CellResult, floorPut: number) {
  if (c.failed) return `${c.id.padEnd(30)} FAILED: ${c.failed}`;
  const e2e = c.endToEnd ? `  e2e p50 ${fmt(c.endToEnd.p50)} p99 ${fmt(c.endToEnd.p99)} ms` : '';
  const adjacent = c.adjacentFloor ? ` (${(c.perSecond / c.adjacentFloor).toFixed(2)}× the ${fmt(c.adjacentFloor)} PutItem/s measured just before)` : '';
  return (
    `${c.id.padEnd(30)} ${fmt(c.perSecond).padStart(7)} msg/s  ${(c.perSecond / floorPut).toFixed(2).padStart(5)}× floor  ` +
    `req p50 ${fmt(c.requestLatency.p50, 1)} ms  ${c.perMessage.wru.toFixed(2)} WRU ${c.perMessage.rru.toFixed(2)} RRU/msg  ` +
    `cpu node ${c.cpu.bench.toFixed(2)} java ${c.cpu.dynamoLocal?.toFixed(2) ?? '?'} others ${c.cpu.others?.toFixed(2) ?? '?'}${e2e}${adjacent}`
  );
}

/** Idle consumers' modelled month and wake latency (issue 15); a failure is logged and leaves the rows out. */
async function idlePhase(env: IdleEnv): Promise<{ idle?: IdleRow[]; wake?: WakeRow[] }> {
  const p = PROFILE.idle;
  log(`idle: curl long polls on a standard, a FIFO and a wide FIFO topic (SLUICE_NOTIFIER=activity), an SDK Consumer on its SQS doorbell (local stand-in) and a push group, ${p.warmupPolls + p.measuredPolls} × 20 s (${p.measuredPolls} measured)`);
  let idle: IdleRow[] | undefined;
  let wake: WakeRow[] | undefined;
  try {
    idle = await measureIdle(env, p);
    for (const row of idle) {
      log(
        `idle ${row.id.padEnd(24)} ${usdSmall(row.usdPerMonth).padStart(9)}/month (HTTP API ${usdSmall(row.usdPerMonthHttpApi)}; via ApiUrl ${usdSmall(row.usdPerMonthViaApi)}; target $${row.targetUsd})  window ${row.counted.seconds.toFixed(1)} s: ` +
          `${row.counted.lambdaRequests} Lambda req, ${fmt(row.counted.lambdaBilledMs)} ms, ${row.counted.dynamoCalls} DynamoDB calls ${JSON.stringify(row.byCommand)}, ${row.counted.rru} RRU, ${row.counted.wru} WRU, ${row.counted.storageBytes} B stored`,
      );
    }
  } catch (error) {
    log(`idle FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
  log(`wake: ${p.wakeSamples} sends each to a push group and an SDK Consumer, one at a time`);
  try {
    wake = await measureWake(env, p);
    for (const w of wake) log(`wake ${w.id.padEnd(15)} p50 ${fmt(w.p50)} p95 ${fmt(w.p95)} p99 ${fmt(w.p99)} max ${fmt(w.max)} ms (${w.samples} sends)`);
  } catch (error) {
    log(`wake FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { idle, wake };
}

async function main() {
  const javaVersion = (spawnSync('java', ['-version'], { encoding: 'utf8' }).stderr ?? '').split('\n')[0] ?? '';
  /** What every results file starts with: the run and the machine (the duration up to now). */
  const resultsHeader = (): Pick<BenchResults, 'version' | 'mode' | 'date' | 'durationSeconds' | 'machine'> => ({
    version: 1,
    mode,
    date: new Date(started).toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '?', node: process.version, platform: `${process.platform} ${process.arch}`, java: javaVersion },
  });
  log(`Sluice benchmark, ${mode} mode: concurrency ${concurrency}, ${BODY_BYTES} B bodies, ${SHARDS} FIFO shards, ${cpus().length} CPUs, Node ${process.version}`);
  const waitQuiet = Number(values['wait-quiet'] ?? 0);
  let otherCpuAtStart = await busyElsewhere();
  for (const until = Date.now() + waitQuiet * 1000; otherCpuAtStart > 0.3 && Date.now() < until; ) {
    log(`waiting for a quiet machine: other processes keep ${otherCpuAtStart.toFixed(2)} cores busy`);
    await sleep(4000);
    otherCpuAtStart = await busyElsewhere();
  }
  armWatchdog();
  if (otherCpuAtStart > 0.3) log(`warning: other processes keep ${otherCpuAtStart.toFixed(2)} cores busy; the figures will be lower and noisier than on a quiet machine`);
  dynamo = await startDynamoLocal();
  const token = randomBytes(16).toString('hex');
  runtime = await startLocal({ host: '127.0.0.1', port: 0, token, tableName: 'bench', endpoint: dynamo.endpoint, dataDir: undefined });
  log(`DynamoDB Local (in memory) at ${dynamo.endpoint}; Sluice at ${runtime.url}`);

  const meter = new Meter();
  const c = container();
  meter.instrumentDynamo(c.dynamo);
  const raw = createDynamoClients({ endpoint: dynamo.endpoint });
  meter.readItemsWith(itemReader(raw.client));
  // Off until the scale rows: every other phase measures DynamoDB Local as it is.
  const roundTrip = new RoundTrip(5, 10);
  roundTrip.install(c.dynamo);
  const otherClients: string[] = [];
  for (const [name, value] of Object.entries(c as unknown as Record<string, unknown>)) {
    if (name === 'dynamo' || typeof value !== 'object' || value === null) continue;
    const stack = (value as { middlewareStack?: { add?: unknown } }).middlewareStack;
    if (stack && typeof stack.add === 'function') {
      meter.instrumentOther(name, value as { middlewareStack: { add: (...args: any[]) => void } });
      otherClients.push(name);
    }
  }
  // The local runtime's stand-ins for EventBridge Scheduler (scheduleAt) and SQS (send), when the container has them.
  const localTimers = (c as unknown as { localTimers?: Record<string, unknown> }).localTimers;
  if (localTimers && typeof localTimers === 'object') otherClients.push(...meter.instrumentMethods('localTimers', localTimers, ['scheduleAt', 'send']));
  // ... and for the check-back queue (dispatch: the sweep's due checks, and each check-back armed to the second).
  const localChecks = (c as unknown as { localChecks?: Record<string, unknown> }).localChecks;
  if (localChecks && typeof localChecks === 'object') otherClients.push(...meter.instrumentMethods('localChecks', localChecks, ['dispatch']));
  meter.instrumentServer(runtime.server, routeOf);
  // Push delivery's parts outside the gateway: the dispatcher (stream poller), the push queue and worker, an endpoint.
  const localPush = (c as unknown as { localPush?: Parameters<typeof startPushProbe>[1] }).localPush;
  const pushProbe: PushProbe | undefined = localPush && runtime.dispatcher ? await startPushProbe(meter, localPush, runtime.dispatcher.poller) : undefined;
  const api = new Api(runtime.url, token);
  // The scale rows' clients: a container each (as on AWS), unless --shared-container.
  const sharedContainer = values['shared-container'] === true;
  if (!sharedContainer) clients = await startClientContainers({ token, meter, roundTrip, routeOf });
  const clientApi = clients ? clients.api : () => api;
  const ctx: Ctx = { api, client: clientApi, meter, dynamoPid: dynamo.process.pid, concurrency, bodyBytes: BODY_BYTES, shards: SHARDS, log };

  // ── the floor ──
  const floorTable = 'bench-floor';
  await ensureTable(raw.client, floorTable);
  const idleEnv: IdleEnv = { ctx, runtimeUrl: runtime.url, token, meter, doc: raw.doc, table: 'bench', dynamo: c.dynamo };
  if (idleOnly) {
    const { idle, wake } = await idlePhase(idleEnv);
    if (values.out !== undefined) {
      const outDir = resolve(values.out);
      mkdirSync(outDir, { recursive: true });
      const stem = `${new Date(started).toISOString().slice(0, 10)}-idle-${mode}`;
      // The other phases did not run: their lists are empty, and the report and chart show the idle and wake rows alone.
      const results: BenchResults = {
        ...resultsHeader(),
        config: { concurrency, bodyBytes: BODY_BYTES, idle: PROFILE.idle, otherCpuAtStart, loadAverageAtEnd: loadavg() },
        floor: [],
        cells: [],
        latency: [],
        scheduled: { available: false, reason: 'not measured (--idle-only)' },
        transactional: { available: false, reason: 'not measured (--idle-only)' },
        costs: [],
        ...(idle ? { idle } : {}),
        ...(wake ? { wake } : {}),
        capacityCheck: { compared: 0, agreed: 0, samples: [], calls: 0, unreported: 0 },
      };
      const targets = idleTargets(idle, wake);
      writeFileSync(join(outDir, `${stem}.json`), `${JSON.stringify({ ...results, report: { targets } }, null, 2)}\n`);
      const heading = `# Idle and wake rows (${mode}, ${results.date}, ${results.durationSeconds.toFixed(0)} s, other processes kept ${otherCpuAtStart.toFixed(2)} cores busy at the start, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')})`;
      writeFileSync(join(outDir, `${stem}.md`), `${[heading, '', `![idle and wake rows](${stem}.png)`, '', ...idleSection(idle, wake)].join('\n')}\n`);
      writeFileSync(join(outDir, `${stem}.png`), renderChart(results));
      log(`results: ${join(values.out, stem)}.{json,md,png}`);
    }
    return;
  }
  // ── scale: contention as producers grow, with an AWS-like round trip; the modelled AWS ceiling ──
  const scalePhase = async (only: readonly ScaleTopic[]) => {
    log(
      `scale: producers ${PROFILE.scale.producers.join(', ')} (${PROFILE.scale.wideProducers.join(', ')} where partitions allow) × batches ${PROFILE.scale.batches.join(', ')} ` +
        `per topic type, ${PROFILE.scale.seconds} s each over ${PROFILE.scale.shardKeys} FIFO shard keys (fifo-many-p256: ${PROFILE.scale.wideFifo.seconds} s over ${PROFILE.scale.wideFifo.shardKeys}), ${roundTrip.minMs}–${roundTrip.maxMs} ms added per DynamoDB call; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
    return scaleRows(
      ctx,
      roundTrip,
      PROFILE.scale,
      (row) =>
        log(
          `scale ${row.id.padEnd(24)} ${row.lostRacesPerAppend.toFixed(2)} lost races/append  ${row.requestsPerMessage.toFixed(2)} req/msg  ${(row.wcuPerMessage ?? 0).toFixed(2)} WCU/msg  ` +
            `AWS ceiling ${fmt(row.awsCeilingMsgPerSecond)} msg/s (${row.model}: ${row.limitedBy} on ${row.hottestKey}; hottest key alone ${fmt(row.hottestKeyCeilingMsgPerSecond)})  ` +
            `${row.keysUsed} keys, local ${fmt(row.localMsgPerSecond)} msg/s, ${row.throttled} × 429${row.throttledBy ? ` ${JSON.stringify(row.throttledBy)}` : ''}${row.grants ? `, ${row.grants} grants, ${row.fillers ?? 0} fillers` : ''}${Object.keys(row.errors).length ? `, errors ${JSON.stringify(row.errors)}` : ''}, ${fmt(row.msPerCall, 1)} ms per call, load average ${loadavg()[0]?.toFixed(2)}`,
        ),
      only,
    );
  };
  // ── scale, the consumer side: lost claims as consumers grow, the modelled AWS ceiling ──
  const receivePhase = async (only: readonly ReceiveTopic[]): Promise<ReceiveRow[]> => {
    if (only.length === 0) return [];
    const p = PROFILE.receive;
    log(
      `scale receive: consumers ${p.consumers.join(', ')} × batches ${p.batches.join(', ')} (carried commits too at ${p.carriedBatches.join(', ')}) on ${only.join(', ')}, ${p.seconds} s each (on until ${p.minMessages} messages and ${p.minBatches} batches' worth, ≤ ${p.maxSeconds} s) from a prefilled backlog ` +
        `(≤ ${fmt(p.maxBacklog)}; fifo-many-p256 over ${p.shardKeys} shard keys; fifo-many-p256-steady ${Object.entries(p.steadySeconds).map(([b, s]) => `×${b} ${s} s`).join(', ')} each with a paced producer instead), ${roundTrip.minMs}–${roundTrip.maxMs} ms added per DynamoDB call; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
    return receiveRows(
      ctx,
      roundTrip,
      p,
      (row) =>
        log(
          `scale ${row.id.padEnd(34)} ${row.lostClaimsPerMessage.toFixed(3)} lost claims/msg  ${row.requestsPerMessage.toFixed(2)} req/msg  ${row.wcuPerMessage.toFixed(2)} WCU ${row.rcuPerMessage.toFixed(2)} RCU/msg  ` +
            `AWS ceiling ${fmt(row.awsCeilingMsgPerSecond)} msg/s (${row.model}: ${row.limitedBy} on ${row.hottestKey}; hottest unit alone ${fmt(row.hottestUnitCeilingMsgPerSecond)}; shared units alone ${fmt(row.sharedUnitsCeilingMsgPerSecond)}${row.sharedUnit ? ` (${row.sharedUnit})` : ''})  ${fmt(row.messages)} msgs, local ${fmt(row.localMsgPerSecond)} msg/s, ` +
            `${row.emptyReceives}/${row.receives} empty receives, backlog ${fmt(row.backlogBefore)}, ${row.claims} claims, ${row.grants ?? 0} range claims, ${row.raises} raises (${row.raisesPerMessage.toFixed(2)}/msg), catalog ${(row.catalogRcuPerConsumerSecond ?? 0).toFixed(2)} RCU/s a consumer${row.ranDry ? ' RAN DRY (row invalid)' : ''}, ${fmt(row.msPerCall, 1)} ms per call${Object.keys(row.errors).length ? `, errors ${JSON.stringify(row.errors)}` : ''}, load average ${loadavg()[0]?.toFixed(2)}\n` +
            row.topUnits.slice(0, 3).map((u) => `        ${u.unit}: ${u.wcuPerMessage.toFixed(2)} WCU ${u.rcuPerMessage.toFixed(2)} RCU ${u.claimsPerMessage.toFixed(2)} claims/msg, ${u.lostClaims} lost, ${u.kind === 'item' ? `chain ${u.chainCalls.toFixed(2)} calls` : u.kind} → ${fmt(u.bound)} msg/s (${u.limitedBy})`).join('\n'),
        ),
      only,
    );
  };
  if (scaleOnly) {
    const rows = scaleTopics.length > 0 ? await scalePhase(scaleTopics) : [];
    const receive = await receivePhase(receiveTopics);
    if (values.out !== undefined) {
      const outDir = resolve(values.out);
      mkdirSync(outDir, { recursive: true });
      const stem = `${new Date(started).toISOString().slice(0, 10)}-scale-${mode}`;
      const roundTripConfig = { minMs: roundTrip.minMs, maxMs: roundTrip.maxMs, clients: sharedContainer ? ('shared' as const) : ('own' as const) };
      const run = { date: new Date(started).toISOString(), durationSeconds: (Date.now() - started) / 1000, loadAverageAtEnd: loadavg(), otherCpuAtStart, machine: { cpus: cpus().length, node: process.version }, config: { ...PROFILE.scale, receive: PROFILE.receive, roundTrip: roundTripConfig } };
      writeFileSync(join(outDir, `${stem}.json`), `${JSON.stringify({ ...run, scale: rows, scaleReceive: receive }, null, 2)}\n`);
      const sections = [...(rows.length > 0 ? scaleSection(rows, roundTripConfig) : []), ...(receive.length > 0 ? receiveSection(receive, roundTripConfig) : [])];
      writeFileSync(join(outDir, `${stem}.md`), `${[`# Scale rows (${mode}, ${run.date}, ${run.durationSeconds.toFixed(0)} s, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')})`, '', ...sections].join('\n')}\n`);
      log(`results: ${join(values.out, stem)}.{json,md}`);
    }
    log(`scale-only: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return;
  }
  const floors: FloorResult[] = [];
  for (const kind of costOnly ? [] : (['PutItem', 'TransactWriteItems(2)'] as const)) {
    await floor(ctx, raw.doc, floorTable, kind, PROFILE.floorWarmupSeconds); // warm-up: DynamoDB Local's JVM speeds up for several seconds
    const f = await floor(ctx, raw.doc, floorTable, kind, PROFILE.floorSeconds);
    floors.push(f);
    log(`floor ${kind.padEnd(22)} ${fmt(f.perSecond).padStart(7)} ops/s at concurrency ${concurrency} (p50 ${fmt(f.latency.p50, 1)} ms, p99 ${fmt(f.latency.p99, 1)} ms, cpu node ${f.cpu.bench.toFixed(2)} java ${f.cpu.dynamoLocal?.toFixed(2) ?? '?'} others ${f.cpu.others?.toFixed(2) ?? '?'})`);
  }
  const floorPut = floors[0]?.perSecond ?? 1;
  /** A short PutItem sample right before a lifecycle cell, so that its ratio to the floor is paired in time. */
  const paired = async <T extends CellResult>(make: () => Promise<T>): Promise<T> => {
    const adjacent = await floor(ctx, raw.doc, floorTable, 'PutItem', PROFILE.pairedFloorSeconds);
    const cell = await make();
    return { ...cell, adjacentFloor: adjacent.perSecond };
  };

  // ── throughput by mode ──
  const cells: CellResult[] = [];
  const total = BATCHES.length * 3 + PROFILE.fifoBatches.length * (1 + 2 * FIFO_MODES.length);
  const run = async (make: () => Promise<CellResult>, _topic: string, base: Pick<CellResult, 'id' | 'topicType' | 'mode' | 'op' | 'batch'>) => {
    let cell: CellResult;
    try {
      cell = await make();
    } catch (error) {
      cell = {
        ...base,
        seconds: 0,
        messages: 0,
        perSecond: 0,
        httpRequests: 0,
        requestLatency: { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 },
        errors: {},
        perMessage: { dynamoRequests: 0, wru: 0, wruGsi: 0, wruFailedModel: 0, rru: 0, rruMinModel: 0, conditionalFailures: 0 },
        cpu: { bench: 0, dynamoLocal: undefined, others: undefined },
        breakdown: [],
        failed: error instanceof Error ? error.message : String(error),
      };
    }
    cells.push(cell);
    log(`[${String(cells.length).padStart(2)}/${total}] ${describeCell(cell, floorPut)}`);
  };
  const seconds = PROFILE.cellSeconds;
  for (const b of costOnly ? [] : BATCHES) {
    // standard
    const std = `std-b${b}`;
    await api.put(`/v1/topics/${std}`, { type: 'standard' });
    await api.put(`/v1/groups/${std}-g`, { subscriptions: [{ topic: std }], visibilityTimeoutSeconds: 300 });
    await warmUp(ctx, std, 'standard', [`${std}-g`]);
    await run(() => sendCell(ctx, `standard send ×${b}`, std, 'standard', b, seconds), std, { id: `standard send ×${b}`, topicType: 'standard', mode: 'standard', op: 'send', batch: b });
    await run(() => drainCell(ctx, `standard receive+commit ×${b}`, `${std}-g`, 'standard', 'standard', b, seconds), std, { id: `standard receive+commit ×${b}`, topicType: 'standard', mode: 'standard', op: 'receive+commit', batch: b });
    const stdLc = `std-lc-b${b}`;
    await api.put(`/v1/topics/${stdLc}`, { type: 'standard' });
    await api.put(`/v1/groups/${stdLc}-g`, { subscriptions: [{ topic: stdLc }], visibilityTimeoutSeconds: 300 });
    await warmUp(ctx, stdLc, 'standard', [`${stdLc}-g`]);
    await run(() => paired(() => lifecycleCell(ctx, `standard lifecycle ×${b}`, stdLc, `${stdLc}-g`, 'standard', 'standard', b, seconds)), stdLc, { id: `standard lifecycle ×${b}`, topicType: 'standard', mode: 'standard', op: 'lifecycle', batch: b });

    // FIFO: one topic, one group per delivery mode; each group drains the same backlog.
    if (!PROFILE.fifoBatches.includes(b)) continue;
    const fifo = `fifo-b${b}`;
    await api.put(`/v1/topics/${fifo}`, { type: 'fifo' });
    for (const m of FIFO_MODES) await api.put(`/v1/groups/${fifo}-${m}`, { subscriptions: [{ topic: fifo }], deliveryMode: m, visibilityTimeoutSeconds: 300 });
    await warmUp(ctx, fifo, 'fifo', FIFO_MODES.map((m) => `${fifo}-${m}`));
    await run(() => sendCell(ctx, `fifo send ×${b}`, fifo, 'fifo', b, seconds), fifo, { id: `fifo send ×${b}`, topicType: 'fifo', mode: 'concurrent', op: 'send', batch: b });
    for (const m of FIFO_MODES) {
      await run(() => drainCell(ctx, `fifo ${m} receive+commit ×${b}`, `${fifo}-${m}`, 'fifo', m, b, seconds), fifo, { id: `fifo ${m} receive+commit ×${b}`, topicType: 'fifo', mode: m, op: 'receive+commit', batch: b });
    }
    for (const m of FIFO_MODES) {
      const lc = `fifo-lc-${m}-b${b}`;
      await api.put(`/v1/topics/${lc}`, { type: 'fifo' });
      await api.put(`/v1/groups/${lc}-g`, { subscriptions: [{ topic: lc }], deliveryMode: m, visibilityTimeoutSeconds: 300 });
      await warmUp(ctx, lc, 'fifo', [`${lc}-g`]);
      await run(() => paired(() => lifecycleCell(ctx, `fifo ${m} lifecycle ×${b}`, lc, `${lc}-g`, 'fifo', m, b, seconds)), lc, { id: `fifo ${m} lifecycle ×${b}`, topicType: 'fifo', mode: m, op: 'lifecycle', batch: b });
    }
  }

  // ── cost per message type ──
  await api.put('/v1/topics/probe', { type: 'standard' });
  const scheduledProbe = await probeScheduled(ctx, 'probe');
  const producerProbe = await api.request('PUT', '/v1/producers/bench-probe', { checkerUrl: 'http://127.0.0.1:9/sluice-check' }, 'probe');
  let transactional = { available: producerProbe.status === 200 || producerProbe.status === 201, reason: '' };
  if (transactional.available) {
    const tx = await api.request<{ state?: string; transactionId?: string; code?: string; detail?: string }>('POST', '/v1/topics/probe/messages', { body: 'probe', transaction: { producerGroup: 'bench-probe' } }, 'probe');
    transactional =
      tx.status === 201 && tx.body.state === 'prepared'
        ? { available: true, reason: 'probe send with transaction answered 201 prepared' }
        : { available: false, reason: `probe send with transaction answered ${tx.status} ${tx.body.code ?? ''}: ${tx.body.detail ?? ''}` };
    if (tx.body.transactionId) await api.request('POST', `/v1/transactions/${tx.body.transactionId}/rollback`, {}, 'probe');
  } else {
    const b = producerProbe.body as { code?: string; detail?: string } | undefined;
    transactional.reason = `PUT /v1/producers answered ${producerProbe.status} ${b?.code ?? ''}: ${b?.detail ?? ''}`.trim();
  }
  log(`scheduled delivery: ${scheduledProbe.available ? 'available' : 'not available'} (${scheduledProbe.reason})`);
  log(`transactional messages: ${transactional.available ? 'available' : 'not available'} (${transactional.reason})`);

  const costTypes: CostType[] = [
    { id: 'normal-1', label: 'normal, standard topic, unbatched', topicType: 'standard', mode: 'standard', batch: 1 },
    { id: 'normal-1-random', label: 'normal, unbatched, incompressible body (random base64)', topicType: 'standard', mode: 'standard', batch: 1, body: 'random' },
    { id: 'normal-1-carry', label: 'normal, unbatched, commit carried by the next receive', topicType: 'standard', mode: 'standard', batch: 1, variant: 'carry' },
    { id: 'normal-10-carry', label: 'normal, batches of 10, commit carried by the next receive', topicType: 'standard', mode: 'standard', batch: 10, variant: 'carry' },
    { id: 'normal-10', label: 'normal, standard topic, batches of 10', topicType: 'standard', mode: 'standard', batch: 10 },
    { id: 'normal-100', label: 'normal, standard topic, batches of 100', topicType: 'standard', mode: 'standard', batch: 100 },
    { id: 'normal-dedup-key-1', label: 'normal with dedupId and 1 key, unbatched', topicType: 'standard', mode: 'standard', batch: 1, variant: 'dedup+key' },
    ...FIFO_MODES.flatMap((m): CostType[] => [
      { id: `fifo-${m}-1`, label: `ordered (FIFO, ${m}), unbatched`, topicType: 'fifo', mode: m, batch: 1 },
      { id: `fifo-${m}-10`, label: `ordered (FIFO, ${m}), batches of 10 over 10 shards`, topicType: 'fifo', mode: m, batch: 10 },
    ]),
    { id: 'fifo-serialized-1-seq', label: 'ordered (FIFO, serialized), unbatched, sequenced topic (shard numbers from a counter)', topicType: 'fifo', mode: 'serialized', batch: 1, sequenced: true },
    { id: 'fifo-concurrent-10-seq', label: 'ordered (FIFO, concurrent), batches of 10 over 10 shards, sequenced topic', topicType: 'fifo', mode: 'concurrent', batch: 10, sequenced: true },
    { id: 'fifo-concurrent-10-one-shard', label: 'ordered (FIFO, concurrent), batches of 10 of one shard', topicType: 'fifo', mode: 'concurrent', batch: 10, shardKeys: 'per-batch' },
    { id: 'fifo-serialized-1-carry-one-shard', label: 'ordered (FIFO, serialized), unbatched, one shard, commit carried by the next receive', topicType: 'fifo', mode: 'serialized', batch: 1, variant: 'carry', shardKeys: 'one' },
    { id: 'fifo-concurrent-1-new-shard', label: 'ordered (FIFO, concurrent), unbatched, a new shard key per message', topicType: 'fifo', mode: 'concurrent', batch: 1, shardKeys: 'fresh' },
    { id: 'fifo-concurrent-1-p16', label: 'ordered (FIFO, concurrent), unbatched, 16 notice streams (a wide topic: its ready index per notice stream)', topicType: 'fifo', mode: 'concurrent', batch: 1, partitions: 16 },
    ...(scheduledProbe.available ? [{ id: 'scheduled-1', label: 'scheduled (delaySeconds 1), unbatched', topicType: 'standard', mode: 'standard', batch: 1, variant: 'scheduled' } as CostType] : []),
    ...(pushProbe
      ? [
          { id: 'push-1', label: 'push group (URL endpoint answering 200), unbatched: dispatcher, push queue, worker, signed POST', topicType: 'standard', mode: 'standard', batch: 1, variant: 'push' } as CostType,
          { id: 'push-10', label: 'push group, sends of 10, batchSize 10', topicType: 'standard', mode: 'standard', batch: 10, variant: 'push' } as CostType,
        ]
      : []),
    ...(transactional.available ? [{ id: 'transactional-1', label: 'transactional (send, commit, receive, commit)', topicType: 'standard', mode: 'standard', batch: 1, variant: 'transactional' } as CostType] : []),
  ];
  const costCtx: Ctx = { ...ctx, shards: PROFILE.costShards };
  const costs: CostResult[] = [];
  for (const type of costTypes.filter((t) => !costOnly || costOnly.includes('all') || costOnly.includes(t.id))) {
    const topic = `cost-${type.id}`;
    const group = `${topic}-g`;
    try {
      await api.put(`/v1/topics/${topic}`, { type: type.topicType, ...(type.partitions === undefined ? {} : { partitions: type.partitions }), ...(type.sequenced ? { sequenced: true } : {}) });
      await api.put(`/v1/groups/${group}`, {
        subscriptions: [{ topic }],
        ...(type.topicType === 'fifo' ? { deliveryMode: type.mode } : {}),
        visibilityTimeoutSeconds: 300,
        ...(type.variant === 'push' && pushProbe ? { push: { url: pushProbe.url, batchSize: type.batch } } : {}),
      });
      if (type.variant === 'transactional') await api.put(`/v1/producers/${topic}-producer`, { checkerUrl: 'http://127.0.0.1:9/sluice-check' });
      const result = await costOf(costCtx, type, PROFILE.costRounds[type.batch] ?? 5, { topic, group, ...(pushProbe ? { push: pushProbe } : {}) });
      costs.push(result);
      const m = result.messages;
      log(
        `cost ${type.id.padEnd(20)} ${(result.dynamo.requests / m).toFixed(2)} DynamoDB req, ${((result.dynamo.wruTable + result.dynamo.wruGsi) / m).toFixed(2)} WRU ` +
          `(${(result.dynamo.wruGsi / m).toFixed(2)} GSI, +${(result.dynamo.wruFailedModel / m).toFixed(2)} failed), ${((result.dynamo.rru + result.dynamo.rruMinModel) / m).toFixed(2)} RRU, ${(result.http.requests / m).toFixed(2)} HTTP req per message`,
      );
      // A check of a change wants to know where the units went.
      if (costOnly) for (const b of result.breakdown) log(`    ${b.route.padEnd(20)} ${b.command.padEnd(20)} ${b.requests.toFixed(2)} req ${b.wru.toFixed(2)} WRU (${b.wruGsi.toFixed(2)} GSI, +${b.wruFailedModel.toFixed(2)} failed) ${(b.rru + b.rruMinModel).toFixed(2)} RRU`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      costs.push({ type, messages: 0, seconds: 0, dynamo: { requests: 0, wruTable: 0, wruGsi: 0, wruFailedModel: 0, rru: 0, rruMinModel: 0, conditionalFailures: 0, bytesPut: 0, itemsWritten: 0, byCommand: {} }, http: { requests: 0, billedMs: 0, ms: 0, apiUnits: 0, byRoute: {}, billedMsByRoute: {}, status: {} }, other: {}, breakdown: [], skipped: reason });
      log(`cost ${type.id.padEnd(20)} FAILED: ${reason}`);
    }
  }

  if (costOnly) {
    // Priced as the report prices them (USD per million messages), with the counters outside DynamoDB and HTTP.
    const priced = buildReport({ version: 1, mode, date: new Date(started).toISOString(), durationSeconds: 0, machine: { cpus: 0, cpuModel: '', node: '', platform: '', java: '' }, config: { bodyBytes: BODY_BYTES }, floor: [], cells: [], latency: [], scheduled: { available: false, reason: 'not measured' }, transactional, costs, capacityCheck: { compared: 0, agreed: 0, samples: [], calls: 0, unreported: 0 } });
    for (const t of priced.types.filter((x) => !x.skipped)) {
      const p = t.perMessage;
      log(
        `priced ${t.id.padEnd(18)} $${t.cost.totalFunctionUrl.toFixed(2)} per million (function URL), $${t.cost.total.toFixed(2)} (HTTP API): writes $${t.cost.dynamoWrites.toFixed(2)}, reads $${t.cost.dynamoReads.toFixed(2)}, ` +
          `Lambda requests $${t.cost.lambdaRequests.toFixed(2)} (${p.lambdaRequests.toFixed(2)}/msg, ${p.pushLambdaRequests.toFixed(2)} dispatcher + push worker), duration $${t.cost.lambdaDuration.toFixed(2)} (${(p.lambdaGbSeconds * 1e6).toFixed(0)} GB-µs/msg), ` +
          `SQS $${t.cost.sqs.toFixed(2)} (${p.sqsRequests.toFixed(2)} req/msg, ${p.pushJobs.toFixed(2)} push jobs/msg), ${p.pushRequests.toFixed(2)} push POSTs/msg; other ${JSON.stringify(t.other)}`,
      );
    }
    return;
  }

  // ── latency, then scheduled lateness (apart, so that neither loads the other) ──
  const latencies: LatencyResult[] = [];
  for (const [type, count] of [['standard', PROFILE.latencyStandard], ['fifo', PROFILE.latencyFifo]] as const) {
    const topic = `lat-${type}`;
    await api.put(`/v1/topics/${topic}`, { type });
    await api.put(`/v1/groups/${topic}-g`, { subscriptions: [{ topic }], ...(type === 'fifo' ? { deliveryMode: 'concurrent' } : {}), visibilityTimeoutSeconds: 300 });
    const { result: l, window } = await measured(ctx, () => latency(ctx, type, topic, `${topic}-g`, type, type === 'fifo' ? 'concurrent' : 'standard', count, 4, quick ? 20 : 60));
    const calls = Object.values(window.counted.dynamo).reduce((n, c) => n + c.calls, 0);
    const ms = Object.values(window.counted.dynamo).reduce((n, c) => n + c.ms, 0);
    const withContext = { ...l, dynamoMsPerCall: calls ? ms / calls : 0, cpu: window.cpu };
    latencies.push(withContext);
    log(
      `latency ${type.padEnd(9)} send→receive p50 ${fmt(l.sendToReceive.p50, 1)} p95 ${fmt(l.sendToReceive.p95, 1)} p99 ${fmt(l.sendToReceive.p99, 1)} ms ` +
        `(${l.received}/${l.messages} received, 4 long-polling consumers; DynamoDB ${fmt(withContext.dynamoMsPerCall, 1)} ms per call, others ${window.cpu.others?.toFixed(2) ?? '?'} cores)`,
    );
  }
  let scheduledResult: ScheduledResult = { available: false, reason: scheduledProbe.reason };
  if (scheduledProbe.available) {
    await api.put('/v1/topics/sched', { type: 'standard' });
    await api.put('/v1/groups/sched-g', { subscriptions: [{ topic: 'sched' }], visibilityTimeoutSeconds: 300 });
    log(`scheduled: ${PROFILE.scheduledCount} messages with delays 1–${PROFILE.scheduledMaxDelay} s, 2 long-polling consumers`);
    scheduledResult = await scheduled(ctx, 'sched', 'sched-g', PROFILE.scheduledCount, PROFILE.scheduledMaxDelay).catch(
      (error: unknown): ScheduledResult => ({ available: true, reason: `failed: ${error instanceof Error ? error.message : String(error)}` }),
    );
    const l = scheduledResult.lateness;
    log(l ? `scheduled lateness p50 ${fmt(l.p50)} ms p99 ${fmt(l.p99)} ms (${scheduledResult.received}/${scheduledResult.messages} received, ${scheduledResult.early} early)` : `scheduled: ${scheduledResult.reason}`);
  }

  const scale: ScaleRow[] = await scalePhase(SCALE_TOPICS);
  const scaleReceive: ReceiveRow[] = await receivePhase(RECEIVE_TOPICS);

  const { idle, wake } = await idlePhase(idleEnv);

  raw.client.destroy();
  const finalSnapshot = meter.snapshot();
  const results: BenchResults = {
    ...resultsHeader(),
    config: { concurrency, bodyBytes: BODY_BYTES, batches: BATCHES, ...PROFILE, roundTrip: { minMs: roundTrip.minMs, maxMs: roundTrip.maxMs, clients: sharedContainer ? 'shared' : 'own' }, otherClients, otherCpuAtStart },
    floor: floors,
    cells,
    latency: latencies,
    scheduled: scheduledResult,
    transactional,
    costs,
    scale,
    scaleReceive,
    ...(idle ? { idle } : {}),
    ...(wake ? { wake } : {}),
    capacityCheck: {
      ...finalSnapshot.check,
      calls: Object.values(finalSnapshot.dynamo).reduce((n, c) => n + c.calls - c.errors, 0),
      unreported: Object.values(finalSnapshot.dynamo).reduce((n, c) => n + c.unreported, 0),
    },
  };
  const report = buildReport(results);
  const outDir = resolve(values.out ?? 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const stem = `${new Date(started).toISOString().slice(0, 10)}-${mode}`;
  writeFileSync(join(outDir, `${stem}.json`), `${JSON.stringify({ ...results, report }, null, 2)}\n`);
  writeFileSync(join(outDir, `${stem}.md`), renderMarkdown(results, report, `${stem}.png`));
  writeFileSync(join(outDir, `${stem}.png`), renderChart(results));
  log(`results: ${join(values.out ?? 'bench/results', stem)}.{json,md,png}`);
  for (const t of report.targets) log(`target ${t.met === undefined ? 'n/a ' : t.met ? 'MET ' : 'MISS'} ${t.name}: ${t.actual}`);
}

try {
  await main();
  await stopAll();
  log('done');
  process.exit(0);
} catch (error) {
  console.error('bench failed:', error);
  await stopAll();
  process.exit(1);
}
