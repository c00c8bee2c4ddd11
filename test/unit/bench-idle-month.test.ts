/** The report's idle month (bench/report.ts, bench/pricing.ts `MONTHLY`): per group, and per FIFO shard cursor a group keeps. */
import { describe, expect, it } from 'vitest';
import { buildReport, renderMarkdown } from '../../bench/report.js';
import { MONTHLY, PRICES } from '../../bench/pricing.js';
import { benchResults } from '../helpers/bench-results.js';

describe('the idle month', () => {
  it("prices a FIFO group's shard cursors, which the per-minute figures read whole: ≈ $330 a month at 10^6", () => {
    // 43,200 ticks × 250 bytes ÷ 4 KB per RRU, at the list price of a read request unit.
    expect(MONTHLY.groupMetricsPerShardCursor).toBeCloseTo(((43_200 * 250) / 4096) * (PRICES.dynamoRruPerMillion / 1e6), 12);
    expect(MONTHLY.groupMetricsPerShardCursor * 1e6).toBeGreaterThan(320);
    expect(MONTHLY.groupMetricsPerShardCursor * 1e6).toBeLessThan(340);
    const r = benchResults();
    const md = renderMarkdown(r, buildReport(r), 'chart.png');
    expect(md).toContain("| a FIFO group's shard cursors | group-metrics reads: USD per month |");
    expect(md).toMatch(/\| 1,000,000 \| \*\*\$3\d\d(\.\d+)?\*\* \|/);
  });
});
