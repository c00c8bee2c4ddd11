/** Turns the measurements into the cost model, the target verdicts and the Markdown report. */
import { CONDITIONAL, DISPATCHER_MEMORY_MB, LAMBDA_MEMORY_MB, MONTHLY, groupMetricsCursorReads, RECEIVE_MEMORY_MB, apiGbSeconds, PUSH_WORKER_MEMORY_MB, PRICES, PRICE_TABLE, costPerMillion, sqsPerMillion, type CostBreakdown, type PerMessage } from './pricing.js';
import type { Snapshot } from './meter.js';
import type { CellResult, CostResult, FloorResult, LatencyResult, ScheduledResult } from './workloads.js';
import type { ScaleRow } from './scale.js';
import { receiveSection, scaleSection, type RunConfig } from './scale-report.js';
import type { ReceiveRow } from './scale-receive.js';
import type { IdleRow, WakeRow } from './idle-cost.js';
import { idleSection, idleTargets } from './idle-report.js';

export interface BenchResults {
  version: 1;
  mode: 'quick' | 'full';
  date: string;
  durationSeconds: number;
  machine: { cpus: number; cpuModel: string; node: string; platform: string; java: string };
  config: Record<string, unknown>;
  floor: FloorResult[];
  cells: CellResult[];
  latency: LatencyResult[];
  scheduled: ScheduledResult;
  transactional: { available: boolean; reason: string };
  costs: CostResult[];
  /** Contention as producers grow and the modelled AWS ceiling (bench/scale.ts); absent in runs before it existed. */
  scale?: ScaleRow[];
  /** The consumer side: lost claims, requests and the modelled AWS ceiling as consumers grow (bench/scale-receive.ts); absent in runs before it existed. */
  scaleReceive?: ReceiveRow[];
  /** One idle consumer's modelled AWS month, per kind (bench/idle.ts); absent in runs before it existed. */
  idle?: IdleRow[];
  /** Send → delivered latency of a push group and an SDK Consumer through the stream path (ms); absent in runs before it existed. */
  wake?: WakeRow[];
  /** Size-model cross-check, and how many successful calls came back without ConsumedCapacity. */
  capacityCheck: Snapshot['check'] & { calls: number; unreported: number };
}

export interface TypeCost {
  id: string;
  label: string;
  batch: number;
  messages: number;
  perMessage: PerMessage & {
    wruTable: number;
    wruGsi: number;
    wruFailedModel: number;
    rruMinModel: number;
    dynamoRequests: number;
    timerLambdaRequests: number;
    /** Invocations of the dispatcher (stream trigger) and of the push worker (push queue consumer). */
    pushLambdaRequests: number;
    /** Push jobs (each an SQS message: sent in a SendMessageBatch of ≤ 10, received, deleted). */
    pushJobs: number;
    /** POSTs a push endpoint received. */
    pushRequests: number;
  };
  requestsByCommand: Record<string, number>;
  httpByRoute: Record<string, number>;
  other: Record<string, number>;
  cost: CostBreakdown;
  sqsStandard: number;
  sqsFifo: number;
  /** The biggest items of the DynamoDB bill of this type, by route and command, USD per million messages. */
  top: Array<{ route: string; command: string; requests: number; wru: number; rru: number; usdPerMillion: number }>;
  skipped?: string;
}

export interface Target {
  name: string;
  target: string;
  actual: string;
  met: boolean | undefined;
}

export interface Report {
  prices: typeof PRICES;
  priceTable: typeof PRICE_TABLE;
  lambdaMemoryMb: number;
  types: TypeCost[];
  targets: Target[];
}

const per = (n: number, m: number) => (m > 0 ? n / m : 0);

export function buildReport(r: BenchResults): Report {
  const types: TypeCost[] = r.costs.map((c) => {
    const m = c.messages;
    const count = (re: RegExp) => Object.entries(c.other).filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0);
    // Local stand-ins: each scheduleAt is one EventBridge Scheduler schedule (one invocation, firing one timer Lambda);
    // each delay-queue send is one SQS message (SendMessage + ReceiveMessage + DeleteMessage, firing one release Lambda).
    const schedules = count(/scheduleAt$|^scheduler\./i);
    const delayMessages = count(/localTimers\.send$/);
    // Each check-queue dispatch is modelled as one SQS message (SendMessageBatch entry + ReceiveMessage + DeleteMessage)
    // firing one check-worker Lambda: armed check-backs carry one id; the minute sweep's batches are not per message.
    const checkMessages = count(/localChecks\.dispatch$/);
    const sqsCalls = count(/^(sqs|delayQueue)\./i);
    // Push delivery (bench/push-cost.ts): the dispatcher's invocations (stream records its filters pass; the reads are free)
    // and the push worker's, each billed per request and per ms at its memory; a push job is SendMessageBatch (≤ 10 jobs a
    // request) + ReceiveMessage + DeleteMessage, counted as one receive and one delete per job (an upper bound: the event
    // source mapping receives and deletes up to 10 at once).
    const dispatcherInvocations = count(/^dispatcher\.invocations$/);
    const workerInvocations = count(/^pushWorker\.invocations$/);
    const pushGbSeconds = (count(/^dispatcher\.billedMs$/) / 1000) * (DISPATCHER_MEMORY_MB / 1024) + (count(/^pushWorker\.billedMs$/) / 1000) * (PUSH_WORKER_MEMORY_MB / 1024);
    const pushSqs = count(/^pushQueue\.sendRequests$/) + 2 * count(/^pushQueue\.jobsReceived$/);
    const perMessage = {
      wru: per(c.dynamo.wruTable + c.dynamo.wruGsi + c.dynamo.wruFailedModel, m),
      wruTable: per(c.dynamo.wruTable, m),
      wruGsi: per(c.dynamo.wruGsi, m),
      wruFailedModel: per(c.dynamo.wruFailedModel, m),
      rru: per(c.dynamo.rru + c.dynamo.rruMinModel, m),
      rruMinModel: per(c.dynamo.rruMinModel, m),
      dynamoRequests: per(c.dynamo.requests, m),
      lambdaRequests: per(c.http.requests + schedules + delayMessages + checkMessages + dispatcherInvocations + workerInvocations, m),
      timerLambdaRequests: per(schedules + delayMessages + checkMessages, m),
      pushLambdaRequests: per(dispatcherInvocations + workerInvocations, m),
      pushJobs: per(count(/^pushQueue\.jobsReceived$/), m),
      pushRequests: per(count(/^pushEndpoint\.requests$/), m),
      // Each route at its function's memory (receive 128 MB); results written before the per-route split, all at 512 MB.
      lambdaGbSeconds: per((c.http.billedMsByRoute ? apiGbSeconds(c.http.billedMsByRoute) : (c.http.billedMs / 1000) * (LAMBDA_MEMORY_MB / 1024)) + pushGbSeconds, m),
      apiRequests: per(c.http.apiUnits, m),
      schedulerInvocations: per(schedules, m),
      sqsRequests: per(3 * (delayMessages + checkMessages) + sqsCalls + pushSqs, m),
    };
    const requestsByCommand = Object.fromEntries(Object.entries(c.dynamo.byCommand).map(([k, v]) => [k, per(v, m)]));
    const httpByRoute = Object.fromEntries(Object.entries(c.http.byRoute).map(([k, v]) => [k, per(v, m)]));
    const top = c.breakdown
      .map((b) => ({
        route: b.route,
        command: b.command,
        requests: b.requests,
        wru: b.wru + b.wruFailedModel,
        rru: b.rru + b.rruMinModel,
        usdPerMillion: (b.wru + b.wruFailedModel) * PRICES.dynamoWruPerMillion + (b.rru + b.rruMinModel) * PRICES.dynamoRruPerMillion,
      }))
      .sort((a, b) => b.usdPerMillion - a.usdPerMillion)
      .slice(0, 6);
    return {
      id: c.type.id,
      label: c.type.label,
      batch: c.type.batch,
      messages: m,
      perMessage,
      requestsByCommand,
      httpByRoute,
      other: c.other,
      cost: costPerMillion(perMessage),
      sqsStandard: sqsPerMillion('standard', Number(r.config.bodyBytes ?? 1024), c.type.batch),
      sqsFifo: sqsPerMillion('fifo', Number(r.config.bodyBytes ?? 1024), c.type.batch),
      top,
      ...(c.skipped ? { skipped: c.skipped } : {}),
    };
  });

  const byId = (id: string) => types.find((t) => t.id === id && !t.skipped);
  const putFloor = r.floor.find((f) => f.kind === 'PutItem')?.perSecond ?? 0;
  const lifecycle1 = r.cells.find((c) => c.id === 'standard lifecycle ×1' && !c.failed);
  const latStd = r.latency.find((l) => l.topicType === 'standard');
  const n1 = byId('normal-1');
  const n10 = byId('normal-10');
  const targets: Target[] = [
    {
      name: 'Normal lifecycle, unbatched: modelled WRU per message',
      target: '≤ 3.0',
      actual: n1 ? `${n1.perMessage.wru.toFixed(2)} WRU` : 'not measured',
      met: n1 ? n1.perMessage.wru <= 3.0 + 1e-9 : undefined,
    },
    {
      name: 'Normal lifecycle, batches of 10: modelled WRU per message',
      target: '≤ 1.5',
      actual: n10 ? `${n10.perMessage.wru.toFixed(2)} WRU` : 'not measured',
      met: n10 ? n10.perMessage.wru <= 1.5 + 1e-9 : undefined,
    },
    (() => {
      // Paired with the PutItem sample taken just before the cell when there is one (the machine's load drifts).
      const floorNow = lifecycle1?.adjacentFloor ?? putFloor;
      const ratio = lifecycle1 && floorNow > 0 ? lifecycle1.perSecond / floorNow : undefined;
      return {
        name: 'Lifecycle throughput, unbatched, vs the PutItem floor',
        target: '≥ 1/3 (0.33×)',
        actual:
          lifecycle1 && ratio !== undefined
            ? `${lifecycle1.perSecond.toFixed(1)} msg/s vs ${floorNow.toFixed(0)} PutItem/s${lifecycle1.adjacentFloor ? ' measured just before' : ''} = ${ratio.toFixed(2)}× (${(lifecycle1.perSecond / Math.max(putFloor, 1e-9)).toFixed(2)}× the run's floor of ${putFloor.toFixed(0)}/s)`
            : 'not measured',
        met: ratio === undefined ? undefined : ratio >= 1 / 3,
      };
    })(),
    {
      name: 'Send → receive latency p99 (long-polling consumer, local)',
      target: '≤ 100 ms',
      actual: latStd && latStd.received > 0 ? `${latStd.sendToReceive.p99.toFixed(1)} ms (p50 ${latStd.sendToReceive.p50.toFixed(1)}, p95 ${latStd.sendToReceive.p95.toFixed(1)})` : 'not measured',
      met: latStd && latStd.received > 0 ? latStd.sendToReceive.p99 <= 100 : undefined,
    },
    {
      name: 'Scheduled delivery lateness p99',
      target: '≤ 1 s',
      actual: r.scheduled.lateness && (r.scheduled.received ?? 0) > 0 ? `${(r.scheduled.lateness.p99 / 1000).toFixed(2)} s (p50 ${(r.scheduled.lateness.p50 / 1000).toFixed(2)} s)` : `not available (${r.scheduled.reason ?? 'not measured'})`,
      met: r.scheduled.lateness && (r.scheduled.received ?? 0) > 0 ? r.scheduled.lateness.p99 <= 1000 : undefined,
    },
    ...idleTargets(r.idle, r.wake),
  ];
  return { prices: PRICES, priceTable: PRICE_TABLE, lambdaMemoryMb: LAMBDA_MEMORY_MB, types, targets };
}

const f = (n: number | undefined, d = 0) => (n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const usd = (n: number) => `$${n < 10 ? n.toFixed(2) : n.toFixed(1)}`;
/** A Markdown table: the first column left-aligned, the figures right-aligned. */
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(' | ')} |`, `|---|${head.slice(1).map(() => '---:').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

export function renderMarkdown(r: BenchResults, rep: Report, chartFile: string): string {
  const putFloor = r.floor.find((x) => x.kind === 'PutItem')?.perSecond ?? 0;
  const out: string[] = [];
  out.push(`# Sluice benchmark — ${r.mode} run of ${r.date.slice(0, 19).replace('T', ' ')} UTC`);
  out.push('');
  out.push(
    `Local runtime in-process on a fresh in-memory DynamoDB Local; ${r.machine.cpus} CPUs (${r.machine.cpuModel}), Node ${r.machine.node}, ${r.machine.java}. ` +
      `Client concurrency ${String(r.config.concurrency)}, ${String(r.config.bodyBytes)} B message bodies (JSON order events with random ids and values, which deflate to about half; one cost row uses incompressible random text), ${String(r.config.shards)} FIFO shard keys, ` +
      `${String(r.config.cellSeconds)} s per throughput cell. Took ${f(r.durationSeconds)} s. Produced by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\`.`,
  );
  out.push('');
  out.push(`![throughput and latency by mode](${chartFile})`);
  out.push('');
  out.push('## Targets (issue 7)');
  out.push('');
  out.push(table(['target', 'goal', 'measured', 'verdict'], rep.targets.map((t) => [t.name, t.target, t.actual, t.met === undefined ? 'n/a' : t.met ? 'met' : '**missed**'])));
  out.push('');
  out.push('## Floor: raw DynamoDB Local');
  out.push('');
  out.push(
    table(
      ['operation', 'ops/s', 'p50 ms', 'p99 ms', 'node CPU', 'DynamoDB Local CPU', 'other CPU'],
      r.floor.map((x) => [x.kind, f(x.perSecond), f(x.latency.p50, 1), f(x.latency.p99, 1), f(x.cpu.bench, 2), f(x.cpu.dynamoLocal, 2), f(x.cpu.others, 2)]),
    ),
  );
  out.push('');
  out.push(`Both at concurrency ${String(r.config.concurrency)}, items of ${String(r.config.bodyBytes)} B (the transaction: that item plus a small side item), on a table of their own. CPU in cores (1.00 = one core busy); *other CPU* is what the rest of the machine used meanwhile (anything above ~0.1 means the figures are disturbed).`);
  out.push('');
  out.push('## Throughput over HTTP');
  out.push('');
  out.push(
    'Messages per second (for receive+commit and lifecycle: messages committed). `× floor` is the ratio to the run\'s raw PutItem/s; lifecycle cells also get a short PutItem sample just before them (`× floor just before`), which pairs the ratio in time when other processes load the machine unevenly. ' +
      '*send*: batches sent as fast as the workers go; *receive+commit*: the same group drains that backlog (receive without waiting, commit the batch); ' +
      '*lifecycle*: each worker loops send → receive (long poll ≤ 1 s) → commit. Per-message DynamoDB figures include retries under contention.',
  );
  out.push('');
  out.push(
    table(
      ['workload', 'msg/s', '× floor', '× floor just before', 'req p50 ms', 'req p99 ms', 'e2e p50 ms', 'e2e p99 ms', 'DynamoDB req/msg', 'WRU/msg', 'RRU/msg', 'node CPU', 'DDB Local CPU', 'other CPU', 'errors'],
      r.cells.map((c) =>
        c.failed
          ? [c.id, 'failed', '', '', '', '', '', '', '', '', '', '', '', '', c.failed.slice(0, 80)]
          : [
              c.id,
              f(c.perSecond),
              f(putFloor ? c.perSecond / putFloor : 0, 2),
              c.adjacentFloor ? `${f(c.perSecond / c.adjacentFloor, 2)} (of ${f(c.adjacentFloor)}/s)` : '',
              f(c.requestLatency.p50, 1),
              f(c.requestLatency.p99, 1),
              c.endToEnd ? f(c.endToEnd.p50, 0) : '',
              c.endToEnd ? f(c.endToEnd.p99, 0) : '',
              f(c.perMessage.dynamoRequests, 2),
              f(c.perMessage.wru + c.perMessage.wruFailedModel, 2),
              f(c.perMessage.rru + c.perMessage.rruMinModel, 2),
              f(c.cpu.bench, 2),
              f(c.cpu.dynamoLocal, 2),
              f(c.cpu.others, 2),
              Object.keys(c.errors).length ? Object.entries(c.errors).map(([k, v]) => `${k}×${v}`).join(' ').slice(0, 80) : '',
            ],
      ),
    ),
  );
  out.push('');
  out.push('## Latency: send → received by a long-polling consumer');
  out.push('');
  out.push(
    table(
      ['topic', 'messages', 'received', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'send request p50 ms', 'DynamoDB ms per call', 'other CPU'],
      r.latency.map((l) => [`${l.topicType} (${l.mode})`, f(l.messages), f(l.received), f(l.sendToReceive.p50, 1), f(l.sendToReceive.p95, 1), f(l.sendToReceive.p99, 1), f(l.sendToReceive.max, 1), f(l.sendRequest.p50, 1), f(l.dynamoMsPerCall, 1), f(l.cpu?.others, 2)]),
    ),
  );
  out.push('');
  out.push('One producer sends one message at a time with a 5–20 ms pause; 4 consumers long-poll (`waitSeconds: 2`). Measured from just before the send request to the parsed receive response.');
  out.push('');
  out.push('## Scheduled delivery lateness');
  out.push('');
  if (r.scheduled.lateness && (r.scheduled.received ?? 0) > 0) {
    const l = r.scheduled.lateness;
    out.push(
      table(
        ['delays', 'messages', 'received', 'early', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
        [[r.scheduled.delays ?? '', f(r.scheduled.messages), f(r.scheduled.received), f(r.scheduled.early), f(l.p50), f(l.p95), f(l.p99), f(l.max)]],
      ),
    );
    out.push('');
    out.push('Lateness = time the long-polling consumer got the message − its `deliverAt` (from the send response).');
  } else {
    out.push(`Not available: ${r.scheduled.reason ?? 'not measured'}.`);
  }
  out.push('');
  out.push('## DynamoDB requests and units per message lifecycle');
  out.push('');
  out.push(
    'One worker, sequential send → receive → commit (one group, ' +
      `${String(r.config.bodyBytes)} B JSON bodies unless the row says otherwise), after a warm-up that opened every stream; the units are what DynamoDB Local reported with ` +
      '`ReturnConsumedCapacity: INDEXES` (table and GSI), plus the modelled charge of failed conditional writes, which DynamoDB Local does not report. ' +
      `Transactional messages: ${r.transactional.available ? 'measured' : `not available (${r.transactional.reason})`}.`,
  );
  out.push('');
  out.push(
    table(
      ['message type', 'messages', 'DynamoDB req', 'by command', 'WRU', 'of which GSI', 'failed-cond. WRU', 'RRU', 'of which min. charge', 'HTTP req', 'timer Lambdas', 'dispatcher + push-worker Lambdas', 'Scheduler', 'SQS req', 'Lambda GB-s'],
      rep.types.map((t) =>
        t.skipped
          ? [t.label, 'failed', '', t.skipped.slice(0, 80), '', '', '', '', '', '', '', '', '', '', '']
          : [
              t.label,
              f(t.messages),
              f(t.perMessage.dynamoRequests, 2),
              Object.entries(t.requestsByCommand)
                .sort((a, b) => b[1] - a[1])
                .map(([k, v]) => `${k} ${f(v, 2)}`)
                .join(', '),
              f(t.perMessage.wru, 2),
              f(t.perMessage.wruGsi, 2),
              f(t.perMessage.wruFailedModel, 2),
              f(t.perMessage.rru, 2),
              f(t.perMessage.rruMinModel, 2),
              f(t.perMessage.lambdaRequests - t.perMessage.timerLambdaRequests - t.perMessage.pushLambdaRequests, 2),
              f(t.perMessage.timerLambdaRequests, 2),
              f(t.perMessage.pushLambdaRequests, 2),
              f(t.perMessage.schedulerInvocations, 2),
              f(t.perMessage.sqsRequests, 2),
              t.perMessage.lambdaGbSeconds.toExponential(2),
            ],
      ),
    ),
  );
  out.push('');
  out.push(
    'HTTP requests = API Gateway requests = API Lambda invocations. *timer Lambdas*, *Scheduler* and *SQS req* come from counting the local runtime\'s ' +
      'stand-ins: each one-time schedule is one EventBridge Scheduler invocation that runs a timer Lambda; each delay-queue message is an SQS ' +
      'SendMessage + ReceiveMessage + DeleteMessage that runs the release Lambda; each check-queue dispatch (a check-back armed to the second, ' +
      'or a sweep\'s batch) is counted the same way, running the check-worker Lambda. *dispatcher + push-worker Lambdas*: invocations of the stream ' +
      `trigger (${DISPATCHER_MEMORY_MB} MB) for flagged segments (a push group or a parked consumer on the topic, FIFO notices) and of the push worker (${PUSH_WORKER_MEMORY_MB} MB); ` +
      'their duration is in *Lambda GB-s* at their memory, and each push job is 1/10 SendMessageBatch + ReceiveMessage + DeleteMessage in *SQS req*. *min. charge*: reads that found nothing, which DynamoDB Local reports as 0 ' +
      'units and AWS bills at the minimum (1 unit strongly consistent, ½ eventually consistent).',
  );
  out.push('');
  out.push('### Where the units go (per message, by route and DynamoDB command)');
  out.push('');
  for (const t of rep.types.filter((x) => !x.skipped)) {
    out.push(`- **${t.label}**: ${t.top.map((x) => `${x.route} ${x.command} ${f(x.requests, 2)} req, ${f(x.wru, 2)} WRU, ${f(x.rru, 2)} RRU`).join('; ')}`);
  }
  out.push('');
  out.push(`## Modelled AWS cost per million messages (${PRICES.region}, list prices of ${PRICES.asOf})`);
  out.push('');
  out.push(
    table(
      ['message type', 'DynamoDB writes', 'DynamoDB reads', 'Lambda requests', `Lambda duration (receive ${RECEIVE_MEMORY_MB} MB, other routes ${LAMBDA_MEMORY_MB} MB)`, 'HTTP API', 'Scheduler + SQS', 'total, function URL (default)', 'total, HTTP API', 'SQS standard', 'SQS FIFO'],
      rep.types
        .filter((t) => !t.skipped)
        .map((t) => [t.label, usd(t.cost.dynamoWrites), usd(t.cost.dynamoReads), usd(t.cost.lambdaRequests), usd(t.cost.lambdaDuration), usd(t.cost.api), usd(t.cost.scheduler + t.cost.sqs), `**${usd(t.cost.totalFunctionUrl)}**`, usd(t.cost.total), usd(t.sqsStandard), usd(t.sqsFifo)]),
    ),
  );
  out.push('');
  out.push(
    'The two totals are the same calls behind the two entry points: the function URL (the default deployment) adds no fee to Lambda\'s; the HTTP API (`entryPoint: \'httpApi\'`) adds its column. ' +
      'Lambda duration is the server-side time each request took here (rounded up to 1 ms per invocation, as Lambda bills), at the configured memory; on AWS the DynamoDB round trips are slower than to a local process, so treat it as a lower bound. ' +
      'SQS: SendMessage + ReceiveMessage + DeleteMessage per message, each metered per 64 KiB chunk; batched types use the SQS batch calls (at most 10 per call). ' +
      'Free tiers, storage, data transfer and CloudWatch are left out on both sides.',
  );
  out.push('');
  out.push('### An idle month: what the deployment costs without traffic');
  out.push('');
  out.push(
    table(
      ['consumer groups', 'group-metrics: per group', 'group-metrics: shared', 'USD per month'],
      [1, 10, 100].map((groups) => [f(groups), usd(MONTHLY.groupMetricsPerGroup * groups), usd(MONTHLY.groupMetricsShared), `**${usd(MONTHLY.groupMetricsPerGroup * groups + MONTHLY.groupMetricsShared)}**`]),
    ),
  );
  out.push('');
  out.push(
    "The per-group metrics (4 custom metrics at $0.30, EMF logs, 9–13 RRU a minute with the dead-letter counters; docs/design.md, \"Per-group metrics\") are billed whatever the traffic and are in none of the per-message rows. " +
      'The every-minute sweeps (timer-sweep, check-sweep) are left out here as before.',
  );
  out.push('');
  out.push(
    table(
      ["a FIFO group's shard cursors", 'of them with work', 'ready-index buckets', 'notice streams', 'group-metrics cursor and notice reads: USD per month'],
      [
        [1_000, 100, 0, 4],
        [100_000, 1_000, 16, 16],
        [1_000_000, 1_000, 64, 256],
        [1_000_000, 100_000, 64, 256],
      ].map(([cursors, active, buckets, notices]) => [f(cursors!), f(active!), f(buckets!), f(notices!), `**${usd(groupMetricsCursorReads(cursors!, active!, buckets!, notices!))}**`]),
    ),
  );
  out.push('');
  out.push(
    "On top of the above: a FIFO group keeps a cursor per shard key it touched, for 15 days after the shard's last claim or notice, idle or not. Its figures read every cursor while they fit one Query page (≈ 4,000 cursors of ≈ 250 bytes); " +
      'past that they read that page, the ready-index keys and, per shard with work, its cursor and its oldest message\'s segment (½ RRU each a minute, eventually consistent), not the idle cursors, and answer `committed: null`; at any size they read each notice stream past the group\'s notice cursor, for messages no receive has discovered ' +
      '(docs/design.md, Per-group metrics, "Figures of a group over very many shards"; before 2026-12-03 evening: every cursor, ≈ $335 a month at 10^6 with 1,000 active).',
  );
  out.push('');
  out.push('### Conditional costs (not exercised by the rows above)');
  out.push('');
  out.push(table(['when', 'units', 'USD per million'], CONDITIONAL.map((c) => [c.what, c.units, usd(c.usdPerMillion)])));
  out.push('');
  out.push('### Prices used');
  out.push('');
  out.push(table(['item', 'price', 'source'], rep.priceTable.map((p) => [p.item, p.price, p.source])));
  out.push('');
  out.push(`Prices as published for ${PRICES.region} on ${PRICES.asOf}, assumed unchanged at the run date (${r.date.slice(0, 10)}).`);
  out.push('');
  const roundTrip = r.config.roundTrip as RunConfig | undefined;
  if (r.scale && r.scale.length > 0 && roundTrip) out.push(...scaleSection(r.scale, roundTrip));
  if (r.scaleReceive && r.scaleReceive.length > 0 && roundTrip) out.push(...receiveSection(r.scaleReceive, roundTrip));
  out.push(...idleSection(r.idle, r.wake));
  out.push('## Measurement check');
  out.push('');
  const chk = r.capacityCheck;
  out.push(
    `DynamoDB Local filled \`ConsumedCapacity\` in ${f(chk.calls - chk.unreported)} of ${f(chk.calls)} successful calls. Cross-check against the AWS size rules where the call carries every item involved (PutItem, GetItem, non-empty full-item Query): ` +
      `${f(chk.agreed)} of ${f(chk.compared)} agreed${chk.samples.length ? `; differences: ${chk.samples.join('; ')}` : ''}.`,
  );
  out.push('');
  return `${out.join('\n')}\n`;
}
