/** The report's idle month (bench/report.ts, bench/pricing.ts `MONTHLY`): per group, and per FIFO shard cursor a group keeps. */
import { describe, expect, it } from 'vitest';
import { buildReport, renderMarkdown } from '../../bench/report.js';
import { MONTHLY, PRICES, groupMetricsCursorReads, groupMetricsNoticeCursorsRru } from '../../bench/pricing.js';
import { benchResults } from '../helpers/bench-results.js';

describe('the idle month', () => {
  it("prices a FIFO group's shard cursors read whole while they fit one Query page", () => {
    // 43,200 ticks × 250 bytes ÷ 4 KB per RRU, at the list price of a read request unit.
    expect(MONTHLY.groupMetricsPerShardCursor).toBeCloseTo(((43_200 * 250) / 4096) * (PRICES.dynamoRruPerMillion / 1e6), 12);
    const segment = MONTHLY.groupMetricsPerOldestSegment;
    expect(groupMetricsCursorReads(1_000, 10, 0)).toBeCloseTo(1_000 * MONTHLY.groupMetricsPerShardCursor + 10 * segment, 12);
    // The last count that fits one 1 MB page, and the first that does not.
    expect(groupMetricsCursorReads(4_194, 0, 0)).toBeCloseTo(4_194 * MONTHLY.groupMetricsPerShardCursor, 12);
    expect(groupMetricsCursorReads(4_195, 0, 0)).toBeCloseTo(MONTHLY.groupMetricsCursorPage + MONTHLY.groupMetricsPerReadyKey, 12);
  });

  it('prices the notice streams read for messages no receive has discovered, at any size: ½ RRU a stream a minute, and the notice cursors\' Query', () => {
    const rru = PRICES.dynamoRruPerMillion / 1e6;
    expect(MONTHLY.groupMetricsPerNoticeStream).toBeCloseTo(43_200 * 0.5 * rru, 12);
    // 4 notice cursors of ≈ 200 bytes: the 1 RRU minimum; 256: 12.5 KB, 13 RRU.
    expect(groupMetricsNoticeCursorsRru(4)).toBe(1);
    expect(groupMetricsNoticeCursorsRru(256)).toBe(13);
    expect(groupMetricsCursorReads(1_000, 10, 0, 4) - groupMetricsCursorReads(1_000, 10, 0)).toBeCloseTo(43_200 * (4 * 0.5 + 1) * rru, 12);
    expect(groupMetricsCursorReads(1e6, 1_000, 64, 256) - groupMetricsCursorReads(1e6, 1_000, 64)).toBeCloseTo(43_200 * (256 * 0.5 + 13) * rru, 12);
    // A default FIFO topic: ≈ 1.6 cents a month; a 256-stream topic: ≈ 76 cents.
    expect(groupMetricsCursorReads(1_000, 10, 0, 4) - groupMetricsCursorReads(1_000, 10, 0)).toBeLessThan(0.02);
    expect(groupMetricsCursorReads(1e6, 1_000, 64, 256) - groupMetricsCursorReads(1e6, 1_000, 64)).toBeGreaterThan(0.7);
    expect(groupMetricsCursorReads(1e6, 1_000, 64, 256) - groupMetricsCursorReads(1e6, 1_000, 64)).toBeLessThan(0.8);
  });

  it('past one page prices the page, the ready-index keys and the shards with work: ≈ $7 at 10^6 cursors with 1,000 active, not ≈ $333', () => {
    const tenToTheSix = groupMetricsCursorReads(1e6, 1_000, 64);
    // 256 RRU + 1,000 × ½ (cursor) + 1,000 × ½ (oldest segment) + 65 × ½ RRU a minute.
    expect(tenToTheSix).toBeCloseTo(43_200 * (256 + 1_000 + 32.5) * (PRICES.dynamoRruPerMillion / 1e6), 9);
    expect(tenToTheSix).toBeGreaterThan(6.5);
    expect(tenToTheSix).toBeLessThan(7.5);
    // It follows the shards with work, not the cursors.
    expect(groupMetricsCursorReads(1e5, 1_000, 64)).toBeCloseTo(tenToTheSix, 12);
    const r = benchResults();
    const md = renderMarkdown(r, buildReport(r), 'chart.png');
    expect(md).toContain("| a FIFO group's shard cursors | of them with work | ready-index buckets | notice streams | group-metrics cursor and notice reads: USD per month |");
    // $6.96 of cursors and segments, $0.76 of 256 notice streams.
    expect(md).toMatch(/\| 1,000,000 \| 1,000 \| 64 \| 256 \| \*\*\$7\.7\d*\*\* \|/);
  });
});
