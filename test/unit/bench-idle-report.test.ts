/** The idle and wake rows (issue 15): the month model, the Markdown section, the target verdicts and the chart panel; the FIFO long-poll rows' topics. */
import { describe, expect, it } from 'vitest';
import { IDLE_TARGETS, MONTH_SECONDS, idleMonth, idleRow, type IdleCounts, type WakeRow } from '../../bench/idle-cost.js';
import { LONG_POLL_ROWS } from '../../bench/idle.js';
import { isWideFifo } from '../../lib/domain/streams.js';
import { buildReport, renderMarkdown } from '../../bench/report.js';
import { benchResults } from '../helpers/bench-results.js';
import { renderChart } from '../../bench/chart.js';

const counts = (over: Partial<IdleCounts>): IdleCounts => ({ seconds: 40, dynamoCalls: 0, rru: 0, wru: 0, lambdaRequests: 0, lambdaBilledMs: 0, storageBytes: 0, ...over });

const results = benchResults;

describe('idleMonth', () => {
  it('scales a window to 30 days and prices Lambda at the given memory, DynamoDB units and storage', () => {
    // One 20 s long poll held 20,000 ms at 512 MB: 129,600 polls a month, 1,296,000 GB-s.
    const m = idleMonth(counts({ seconds: 20, lambdaRequests: 1, lambdaBilledMs: 20_000, rru: 10, wru: 1, dynamoCalls: 20 }), 512);
    expect(m.lambdaRequests).toBeCloseTo(MONTH_SECONDS / 20, 6);
    expect(m.lambdaGbSeconds).toBeCloseTo(1_296_000, 3);
    expect(m.usd.lambdaDuration).toBeCloseTo(1_296_000 * 0.0000133334, 6);
    expect(m.usd.lambdaRequests).toBeCloseTo(0.1296 * 0.2, 9);
    expect(m.usd.dynamoReads).toBeCloseTo(1.296 * 0.125, 9);
    expect(m.usd.dynamoWrites).toBeCloseTo(0.1296 * 0.625, 9);
    expect(m.usd.httpApi).toBe(0);
    expect(m.usdPerMonth).toBeCloseTo(17.28 + 0.02592 + 0.162 + 0.081, 2);
    // Behind the HTTP API: receive at 128 MB, plus $1 per million requests.
    const h = idleMonth(counts({ seconds: 20, lambdaRequests: 1, lambdaBilledMs: 20_000 }), 128, true);
    expect(h.usd.lambdaDuration).toBeCloseTo(4.32, 2);
    expect(h.usd.httpApi).toBeCloseTo(0.1296, 9);
  });

  it('charges a group that makes no calls only its storage: 1 GB-month at $0.25', () => {
    const m = idleMonth(counts({ storageBytes: 1024 ** 3 }), 512);
    expect(m.usdPerMonth).toBeCloseTo(0.25, 12);
    expect(m.lambdaRequests).toBe(0);
  });
});

describe('the report with idle and wake rows', () => {
  const idle = [
    idleRow('http-long-poll', counts({ seconds: 40, lambdaRequests: 2, lambdaBilledMs: 40_040, dynamoCalls: 30, rru: 15, wru: 1 }), { Query: 12, GetItem: 16 }, 'curl-style long poll'),
    idleRow('sdk-consumer', counts({ seconds: 40, lambdaRequests: 2, lambdaBilledMs: 40_040, dynamoCalls: 30, rru: 15, wru: 1 }), { Query: 12 }, 'no doorbell exists yet'),
    idleRow('push-group', counts({ seconds: 40, storageBytes: 600 }), {}, 'calls while idle'),
  ];
  const wake: WakeRow[] = [
    { id: 'push-group', samples: 20, p50: 180, p95: 400, p99: 450, max: 460, note: 'send → endpoint' },
    { id: 'sdk-consumer', samples: 20, p50: 900, p95: 1900, p99: 2100, max: 2150, note: 'send → handler' },
  ];
  const r = results({ idle, wake });

  it('gives each idle and wake row a target verdict', () => {
    const targets = buildReport(r).targets;
    const verdict = (prefix: string) => targets.find((t) => t.name.startsWith(prefix));
    // ≈ $4.51 with receive at 128 MB (its own function URL), ≈ $17.5 when receives go to the api function at 512 MB.
    expect(verdict('Idle http-long-poll')?.met).toBe(true);
    expect(verdict('Idle http-long-poll')?.actual).toMatch(/^\$4\.5\d \(HTTP API: \$4\.6\d; receives sent to ApiUrl, api at 512 MB: \$17\.\d\d\)$/);
    expect(verdict('Idle sdk-consumer')?.met).toBe(false);
    expect(verdict('Idle push-group')?.met).toBe(true);
    expect(verdict('Idle push-group')?.actual).toMatch(/^\$1\.4e-7 /);
    expect(verdict('Wake push-group')?.met).toBe(true);
    expect(verdict('Wake sdk-consumer')?.met).toBe(false);
    expect(verdict('Wake sdk-consumer')?.actual).toBe('2,100 ms (p50 900, 20 sends)');
  });

  it('renders both tables in the Markdown report', () => {
    const md = renderMarkdown(r, buildReport(r), 'x.png');
    expect(md).toContain('## Idle consumers and wake latency (issue 15)');
    const idleLines = md.split('\n').filter((l) => /^\| (http-long-poll|sdk-consumer|push-group) \| [\d.]+ s \|/.test(l));
    expect(idleLines).toHaveLength(3);
    expect(idleLines[0]).toMatch(/\| 129,600 \| .* \| \*\*\$4\.5\d\*\* \| \$4\.6\d \| \$17\.\d\d \| ≤ \$5 \| yes \|$/);
    expect(idleLines[2]).toMatch(/\| 600 B \| \*\*\$1\.4e-7\*\* \| \$1\.4e-7 \| \$1\.4e-7 \| ≤ \$0\.01 \| yes \|$/);
    expect(md).toContain('| push-group | 20 | 180 | 400 | 450 | 460 | yes |');
    expect(md).toContain('| sdk-consumer | 20 | 900 | 1,900 | 2,100 | 2,150 | no |');
    expect(md).toContain('- **sdk-consumer**: no doorbell exists yet.');
  });

  it('leaves the section out of runs without the rows', () => {
    const md = renderMarkdown(results({}), buildReport(results({})), 'x.png');
    expect(md).not.toContain('Idle consumers and wake latency');
    expect(buildReport(results({})).targets.some((t) => t.name.startsWith('Idle') || t.name.startsWith('Wake'))).toBe(false);
  });

  it('draws the idle panel and the wake rows: a taller chart than without them', () => {
    const png = renderChart(r);
    const without = renderChart(results({}));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    // PNG IHDR: height at bytes 20..23. Panel 4 adds a title, 3 rows and a margin; the wake rows add 2 latency rows.
    expect(png.readUInt32BE(20) - without.readUInt32BE(20)).toBe(90 + 40 + 3 * 22 + 8 + 2 * 22);
  });
});

describe('the long-poll rows on FIFO topics', () => {
  it('wait on a standard, a default FIFO and a wide FIFO topic (more than 4 notice streams), each against the $5 target', () => {
    const kind = (id: string) => {
      const row = LONG_POLL_ROWS.find((r) => r.id === id);
      if (!row) throw new Error(`no row ${id}`);
      const body = row.body as { type: 'standard' | 'fifo'; partitions?: number };
      return { type: body.type, wide: isWideFifo({ type: body.type, orderGroup: undefined, partitions: body.partitions ?? 4 }) };
    };
    expect(LONG_POLL_ROWS.map((r) => r.id)).toEqual(['http-long-poll', 'http-long-poll-fifo', 'http-long-poll-fifo-wide', 'http-long-poll-fifo-p256']);
    expect(kind('http-long-poll')).toEqual({ type: 'standard', wide: false });
    expect(kind('http-long-poll-fifo')).toEqual({ type: 'fifo', wide: false });
    expect(kind('http-long-poll-fifo-wide')).toEqual({ type: 'fifo', wide: true });
    expect(kind('http-long-poll-fifo-p256')).toEqual({ type: 'fifo', wide: true });
    expect(new Set(LONG_POLL_ROWS.map((r) => r.topic)).size).toBe(LONG_POLL_ROWS.length);
    for (const r of LONG_POLL_ROWS) expect(IDLE_TARGETS[r.id]).toBe(5);
  });

  // The wide row as measured on 2026-12-02 (6 polls, 120.8 s): 398 calls, 341.5 RRU, 3 WRU, 120,774 billed ms; the default FIFO row 150 RRU.
  const wide = idleRow('http-long-poll-fifo-wide', counts({ seconds: 120.8, lambdaRequests: 6, lambdaBilledMs: 120_774, dynamoCalls: 398, rru: 341.5, wru: 3 }), { Query: 300, GetItem: 77 }, 'wide FIFO long poll');
  const fifo = idleRow('http-long-poll-fifo', counts({ seconds: 120.6, lambdaRequests: 6, lambdaBilledMs: 120_526, dynamoCalls: 159, rru: 150, wru: 3 }), { Query: 60, GetItem: 78 }, 'FIFO long poll');
  const r = results({ idle: [fifo, wide] });

  it('prices them as the standard row: the wide one misses $5 by its reads', () => {
    // Reads: 341.5 RRU per 120.8 s → 7.33 M RRU a month, $0.92; Lambda 128 MB for the whole month, $4.32.
    expect(wide.perMonth.usd.dynamoReads).toBeCloseTo((341.5 * (MONTH_SECONDS / 120.8) * 0.125) / 1e6, 9);
    expect(wide.usdPerMonth).toBeGreaterThan(5);
    expect(fifo.usdPerMonth).toBeLessThan(5);
    const targets = buildReport(r).targets;
    const verdict = (name: string) => targets.find((t) => t.name.startsWith(`Idle ${name}:`));
    expect(verdict('http-long-poll-fifo')?.met).toBe(true);
    expect(verdict('http-long-poll-fifo-wide')?.met).toBe(false);
    expect(verdict('http-long-poll-fifo-wide')?.actual).toMatch(/^\$5\.30 \(HTTP API: \$5\.43; /);
  });

  it('shows them in the Markdown table and the chart, one line each', () => {
    const md = renderMarkdown(r, buildReport(r), 'x.png');
    const lines = md.split('\n').filter((l) => /^\| http-long-poll-fifo(-wide)? \| [\d.]+ s \|/.test(l));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/\| \*\*\$5\.30\*\* \| \$5\.43 \| \$18\.\d\d \| ≤ \$5 \| no \|$/);
    expect(md).toContain('- **http-long-poll-fifo-wide**: wide FIFO long poll.');
    const png = renderChart(r);
    expect(png.readUInt32BE(20) - renderChart(results({})).readUInt32BE(20)).toBe(90 + 40 + 2 * 22 + 8);
  });
});
