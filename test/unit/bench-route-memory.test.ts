/** The per-message Lambda duration (report.ts): each route's billed ms at the memory its function is deployed with. */
import { describe, expect, it } from 'vitest';
import { buildReport } from '../../bench/report.js';
import { LAMBDA_MEMORY_MB, RECEIVE_MEMORY_MB, routeMemoryMb } from '../../bench/pricing.js';
import { benchResults } from '../helpers/bench-results.js';
import type { CostResult } from '../../bench/workloads.js';

const row = (http: CostResult['http']): CostResult => ({
  type: { id: 'normal-1', label: 'normal, unbatched', topicType: 'standard', mode: 'standard', batch: 1 },
  messages: 10,
  seconds: 1,
  dynamo: { requests: 0, wruTable: 0, wruGsi: 0, wruFailedModel: 0, rru: 0, rruMinModel: 0, conditionalFailures: 0, bytesPut: 0, itemsWritten: 0, byCommand: {} },
  http,
  other: {},
  breakdown: [],
});

describe('Lambda duration per route', () => {
  it('matches the deployment: receive at 128 MB (its own function), every other route at 512 MB', () => {
    expect(RECEIVE_MEMORY_MB).toBe(128);
    expect(LAMBDA_MEMORY_MB).toBe(512);
    expect(routeMemoryMb('receive')).toBe(128);
    expect(routeMemoryMb('send-message')).toBe(512);
    expect(routeMemoryMb('commit')).toBe(512);
  });

  it('prices receive ms at 128 MB and send / commit ms at 512 MB', () => {
    const http = {
      requests: 30, billedMs: 600, ms: 590, apiUnits: 30,
      byRoute: { 'send-message': 10, receive: 10, commit: 10 },
      billedMsByRoute: { 'send-message': 100, receive: 400, commit: 100 },
      status: {},
    };
    const [t] = buildReport(benchResults({ costs: [row(http)] })).types;
    // Per message: 10 ms send and 10 ms commit at 0.5 GB, 40 ms receive at 0.125 GB.
    expect(t?.perMessage.lambdaGbSeconds).toBeCloseTo(0.02 * 0.5 + 0.04 * 0.125, 12);
  });

  it('prices results written before the split (no billedMsByRoute) all at 512 MB, as they were', () => {
    const [t] = buildReport(benchResults({ costs: [row({ requests: 30, billedMs: 600, ms: 590, apiUnits: 30, byRoute: {}, status: {} })] })).types;
    expect(t?.perMessage.lambdaGbSeconds).toBeCloseTo(0.06 * 0.5, 12);
  });
});
