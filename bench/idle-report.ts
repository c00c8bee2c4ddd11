/** The Markdown section and the target verdicts of the idle and wake rows (issue 15). */
import { MONTH_SECONDS, RECEIVE_MEMORY_MB, WAKE_TARGET_P99_MS, type IdleRow, type WakeRow } from './idle-cost.js';
import { LAMBDA_MEMORY_MB } from './pricing.js';

/** Same shape as report.ts's Target (kept here so that report.ts only imports this file). */
export interface IdleTarget {
  name: string;
  target: string;
  actual: string;
  met: boolean | undefined;
}

const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '–');
/** Small amounts keep their significant digits ($0.0004), larger ones cents. */
export const usdSmall = (n: number) => (n === 0 ? '$0' : n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`);

export function idleTargets(idle: IdleRow[] | undefined, wake: WakeRow[] | undefined): IdleTarget[] {
  const out: IdleTarget[] = [];
  for (const row of idle ?? []) {
    out.push({
      name: `Idle ${row.id}: modelled USD per month (function URL, receive at ${RECEIVE_MEMORY_MB} MB)`,
      target: `≤ $${row.targetUsd}`,
      actual: `${usdSmall(row.usdPerMonth)} (HTTP API: ${usdSmall(row.usdPerMonthHttpApi)}; receives sent to ApiUrl, api at ${LAMBDA_MEMORY_MB} MB: ${usdSmall(row.usdPerMonthViaApi)})`,
      met: row.usdPerMonth <= row.targetUsd + 1e-12,
    });
  }
  for (const row of wake ?? []) {
    out.push({
      name: `Wake ${row.id}: send → delivered p99 (local, stream path)`,
      target: `≤ ${f(WAKE_TARGET_P99_MS)} ms`,
      actual: row.samples > 0 ? `${f(row.p99)} ms (p50 ${f(row.p50)}, ${row.samples} sends)` : 'nothing arrived',
      met: row.samples > 0 ? row.p99 <= WAKE_TARGET_P99_MS : false,
    });
  }
  return out;
}

export function idleSection(idle: IdleRow[] | undefined, wake: WakeRow[] | undefined): string[] {
  if (!idle?.length && !wake?.length) return [];
  const out: string[] = [];
  out.push('## Idle consumers and wake latency (issue 15)');
  out.push('');
  if (idle?.length) {
    out.push(
      `One idle consumer for a 30-day month (${f(MONTH_SECONDS)} s) at list prices, arm64: the calls counted over a measured window, scaled linearly. ` +
        `*function URL*: the default deployment, receives sent to the \`receive\` function's own URL (\`ReceiveUrl\`, ${RECEIVE_MEMORY_MB} MB); *HTTP API*: the receive route's function at ${RECEIVE_MEMORY_MB} MB, plus $1 per million requests; ` +
          `*via ApiUrl*: the default deployment with receives sent to the \`api\` function (${LAMBDA_MEMORY_MB} MB), when a consumer is not given \`ReceiveUrl\`.`,
    );
    out.push('');
    out.push(
      [
        '| consumer | window | Lambda req / month | GB-s / month | DynamoDB calls / month | RRU / month | WRU / month | storage | USD / month, function URL | USD / month, HTTP API | USD / month, via ApiUrl | target | met |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
        ...idle.map(
          (r) =>
            `| ${r.id} | ${f(r.counted.seconds, 1)} s | ${f(r.perMonth.lambdaRequests)} | ${f(r.perMonth.lambdaGbSeconds)} | ${f(r.perMonth.dynamoCalls)} | ${f(r.perMonth.rru)} | ${f(r.perMonth.wru)} | ${f(r.counted.storageBytes)} B | ` +
            `**${usdSmall(r.usdPerMonth)}** | ${usdSmall(r.usdPerMonthHttpApi)} | ${usdSmall(r.usdPerMonthViaApi)} | ≤ $${r.targetUsd} | ${r.usdPerMonth <= r.targetUsd + 1e-12 ? 'yes' : 'no'} |`,
        ),
      ].join('\n'),
    );
    out.push('');
    for (const r of idle) {
      const parts = Object.entries(r.perMonth.usd)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${usdSmall(v)}`)
        .join(', ');
      const calls = Object.entries(r.byCommand)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');
      out.push(`- **${r.id}**: ${r.note}. Window: ${calls || 'no DynamoDB calls'}, ${f(r.counted.lambdaRequests)} Lambda requests. Month (function URL): ${parts || 'nothing'}.`);
    }
    out.push('');
  }
  if (wake?.length) {
    out.push(`Wake latency, ms (target p99 ≤ ${f(WAKE_TARGET_P99_MS)} ms, local):`);
    out.push('');
    out.push(
      [
        '| row | sends | p50 | p95 | p99 | max | met |',
        '|---|---:|---:|---:|---:|---:|---|',
        ...wake.map((w) => `| ${w.id} | ${w.samples} | ${f(w.p50)} | ${f(w.p95)} | ${f(w.p99)} | ${f(w.max)} | ${w.samples > 0 && w.p99 <= WAKE_TARGET_P99_MS ? 'yes' : 'no'} |`),
      ].join('\n'),
    );
    out.push('');
    for (const w of wake) out.push(`- **${w.id}**: ${w.note}.`);
    out.push('');
  }
  return out;
}
