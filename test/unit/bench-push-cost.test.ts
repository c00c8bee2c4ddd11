/** The push cost rows (issue 15): how report.ts prices the dispatcher, the push queue and the push worker. */
import { describe, expect, it } from 'vitest';
import { buildReport, renderMarkdown } from '../../bench/report.js';
import { benchResults } from '../helpers/bench-results.js';
import type { CostResult } from '../../bench/workloads.js';

const pushRow = (): CostResult => ({
  type: { id: 'push-1', label: 'push group, unbatched', topicType: 'standard', mode: 'standard', batch: 1, variant: 'push' },
  messages: 10,
  seconds: 1,
  dynamo: { requests: 150, wruTable: 50, wruGsi: 0, wruFailedModel: 1, rru: 120, rruMinModel: 0, conditionalFailures: 1, bytesPut: 0, itemsWritten: 0, byCommand: {} },
  // The send requests only: push delivery makes no request to the gateway.
  http: { requests: 10, billedMs: 100, ms: 95, apiUnits: 10, byRoute: {}, status: {} },
  other: {
    'dispatcher.invocations': 10,
    'dispatcher.billedMs': 200,
    'pushQueue.jobsSent': 10,
    'pushQueue.sendRequests': 10,
    'pushQueue.jobsReceived': 10,
    'pushWorker.invocations': 10,
    'pushWorker.billedMs': 1000,
    'pushEndpoint.requests': 10,
  },
  breakdown: [],
});

const results = (costs: CostResult[]) => benchResults({ costs });

describe('push cost row', () => {
  it('adds the dispatcher and push-worker invocations, their duration at 256 / 512 MB, and 3 SQS requests per job', () => {
    const [t] = buildReport(results([pushRow()])).types;
    expect(t?.perMessage.lambdaRequests).toBeCloseTo(3, 9); // send + dispatcher + worker
    expect(t?.perMessage.pushLambdaRequests).toBeCloseTo(2, 9);
    expect(t?.perMessage.timerLambdaRequests).toBe(0);
    // Per message: 10 ms of the send at 512 MB, 20 ms of dispatcher at 256 MB, 100 ms of worker at 512 MB.
    expect(t?.perMessage.lambdaGbSeconds).toBeCloseTo(0.01 * 0.5 + 0.02 * 0.25 + 0.1 * 0.5, 9);
    expect(t?.perMessage.sqsRequests).toBeCloseTo(3, 9);
    expect(t?.perMessage.pushJobs).toBeCloseTo(1, 9);
    expect(t?.perMessage.pushRequests).toBeCloseTo(1, 9);
    expect(t?.cost.sqs).toBeCloseTo(3 * 0.4, 9);
    expect(t?.cost.lambdaRequests).toBeCloseTo(3 * 0.2, 9);
    expect(t?.cost.dynamoWrites).toBeCloseTo(5.1 * 0.625, 9);
  });

  it('a pull row gets no push counters', () => {
    const pull: CostResult = { ...pushRow(), type: { ...pushRow().type, id: 'normal-1', variant: undefined }, other: {} };
    const [t] = buildReport(results([pull])).types;
    expect(t?.perMessage.pushLambdaRequests).toBe(0);
    expect(t?.perMessage.lambdaRequests).toBeCloseTo(1, 9);
    expect(t?.perMessage.sqsRequests).toBe(0);
  });

  it('shows the push Lambdas in the units table of the Markdown report', () => {
    const r = results([pushRow()]);
    const md = renderMarkdown(r, buildReport(r), 'chart.png');
    expect(md).toContain('dispatcher + push-worker Lambdas');
    expect(md).toMatch(/\| push group, unbatched \| 10 \| 15\.00 \|.*\| 1\.00 \| 0\.00 \| 2\.00 \| 0\.00 \| 3\.00 \|/);
  });
});
