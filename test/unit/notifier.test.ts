import { describe, expect, it } from 'vitest';
import { InProcessNotifier } from '../../lib/ports/notifier.js';

const timed = async (p: Promise<void>) => {
  const start = performance.now();
  await p;
  return performance.now() - start;
};

describe('in-process notifier', () => {
  it('wakes a waiter when one of its topics is notified', async () => {
    const n = new InProcessNotifier();
    const waiting = timed(n.wait(['a', 'b'], 5000));
    n.notify('b');
    expect(await waiting).toBeLessThan(1000);
  });

  it('returns at once when a topic was notified after the mark (while the caller was looking)', async () => {
    const n = new InProcessNotifier();
    const mark = n.mark();
    n.notify('a');
    expect(await timed(n.wait(['a'], 5000, mark))).toBeLessThan(50);
  });

  it('waits when only other topics, or only earlier notifications, happened', async () => {
    const n = new InProcessNotifier();
    n.notify('a');
    const mark = n.mark();
    n.notify('other');
    expect(await timed(n.wait(['a'], 120, mark))).toBeGreaterThanOrEqual(100);
  });
});
