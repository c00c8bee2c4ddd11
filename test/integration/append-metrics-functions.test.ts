/**
 * The functions that are not behind the HTTP edge append too (releases, check-back commits, dead
 * letters, notices): each writes its container's append contention metrics after an invocation,
 * as the HTTP edge does after a request (functions/commons/append-metrics.ts), a failed one
 * included. The handlers are invoked as Lambda would, with events that give them nothing to do;
 * the clock is moved past the meter's 60 s window before each.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { APPEND_METRICS_WINDOW_MS } from '../../lib/services/append-meter.js';
import { emfDocumentsOf } from '../helpers/emf.js';
import { testTable } from '../helpers/stores.js';

type Handler = (event: unknown, context: Context) => Promise<unknown>;
type Container = typeof import('../../functions/commons/container.js');
let container: Container['container'];
const context = {} as Context;
const noRecords = { Records: [] };

/** Each function with an event it has nothing to do for. */
const functions: Array<[string, string, unknown]> = [
  ['timers/release', '../../functions/timers/release.js', noRecords],
  ['timers/sweep', '../../functions/timers/sweep.js', {}],
  ['timers/minute', '../../functions/timers/minute.js', { kind: 'minute', minute: 1 }],
  ['checks/sweep', '../../functions/checks/sweep.js', {}],
  ['checks/worker', '../../functions/checks/worker.js', noRecords],
  ['dispatch/dispatcher', '../../functions/dispatch/dispatcher.js', noRecords],
  ['push/worker', '../../functions/push/worker.js', noRecords],
];

beforeAll(async () => {
  const { endpoint, table } = await testTable('append-metrics-fn');
  Object.assign(process.env, { SLUICE_TABLE_NAME: table, DYNAMODB_ENDPOINT: endpoint, SLUICE_NOTIFIER: 'in-process', POWERTOOLS_LOG_LEVEL: 'ERROR' });
  container = (await import('../../functions/commons/container.js')).container;
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterAll(() => vi.useRealTimers());
beforeEach(() => vi.setSystemTime(Date.now() + APPEND_METRICS_WINDOW_MS + 1000));

/** A contended window on topic `jobs`: 5 appends landed, 7 races lost, one 429. */
function contend(): void {
  const record = container().appendMeter.record;
  for (let i = 0; i < 5; i++) record(['t:jobs/p:0'], { landed: true, lost: i < 4 ? 1 : 3, throttled: false });
  record(['t:jobs/p:1'], { landed: false, lost: 0, throttled: true });
}

describe('append contention metrics of the functions outside the HTTP edge', () => {
  it.each(functions)('%s writes them after an invocation', async (_name, module, event) => {
    const handler = (await import(module)).handler as Handler;
    // A window is taken whole: start from an empty one.
    container().appendMeter.take();
    vi.setSystemTime(Date.now() + APPEND_METRICS_WINDOW_MS + 1000);
    contend();
    const docs = await emfDocumentsOf(() => handler(event, context));
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ Topic: 'jobs', Appends: 5, AppendLostRaces: 7, AppendsThrottled: 1 });
  });

  it('a failed invocation writes them too', async () => {
    const handler = (await import('../../functions/timers/minute.js')).handler as Handler;
    container().appendMeter.take();
    vi.setSystemTime(Date.now() + APPEND_METRICS_WINDOW_MS + 1000);
    contend();
    let failed: unknown;
    const docs = await emfDocumentsOf(() => handler({ kind: 'not-a-minute' }, context).catch((error: unknown) => void (failed = error)));
    expect(failed).toBeInstanceOf(Error);
    expect(docs.map((d) => d.Topic)).toEqual(['jobs']);
  });

  it('an uncontended window writes nothing', async () => {
    const handler = (await import('../../functions/timers/release.js')).handler as Handler;
    container().appendMeter.take();
    vi.setSystemTime(Date.now() + APPEND_METRICS_WINDOW_MS + 1000);
    container().appendMeter.record(['t:jobs/p:0'], { landed: true, lost: 0, throttled: false });
    expect(await emfDocumentsOf(() => handler(noRecords, context))).toEqual([]);
  });
});
