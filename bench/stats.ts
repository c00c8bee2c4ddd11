/** Percentiles and small helpers. */
import { readFileSync } from 'node:fs';

export interface Percentiles {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `values` (ms); zeros when empty. */
export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return {
    count: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? 0,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const round = (n: number, digits = 2) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/**
 * CPU seconds used so far by this process, by another process (DynamoDB Local,
 * from /proc) and by the whole machine (busy time of all cores, from /proc/stat).
 */
export function cpuSeconds(pid: number | undefined): { self: number; other: number | undefined; machine: number | undefined } {
  const u = process.cpuUsage();
  const self = (u.user + u.system) / 1e6;
  let other: number | undefined;
  const stat = pid === undefined ? undefined : readText(`/proc/${pid}/stat`);
  if (stat) {
    // Fields after the command name (in parentheses): utime and stime are the 14th and 15th fields.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    other = (Number(rest[11]) + Number(rest[12])) / TICKS;
  }
  let machine: number | undefined;
  const line = readText('/proc/stat')?.split('\n')[0];
  if (line?.startsWith('cpu ')) {
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    machine = (total - (f[3] ?? 0) - (f[4] ?? 0)) / TICKS;
  }
  return { self, other, machine };
}

/** USER_HZ: Linux reports process and machine CPU time in 1/100 s. */
const TICKS = 100;

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
