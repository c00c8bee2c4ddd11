/** An empty benchmark result to build reports from in unit tests (fields given in `over` replace the defaults). */
import type { BenchResults } from '../../bench/report.js';

export const benchResults = (over: Partial<BenchResults> = {}): BenchResults => ({
  version: 1,
  mode: 'quick',
  date: '2026-12-01T10:00:00.000Z',
  durationSeconds: 1,
  machine: { cpus: 2, cpuModel: 'test', node: 'v20', platform: 'linux x64', java: 'java 17' },
  config: { concurrency: 8, bodyBytes: 1024 },
  floor: [],
  cells: [],
  latency: [],
  scheduled: { available: false, reason: 'not measured' },
  transactional: { available: false, reason: 'not measured' },
  costs: [],
  capacityCheck: { compared: 0, agreed: 0, samples: [], calls: 0, unreported: 0 },
  ...over,
});
