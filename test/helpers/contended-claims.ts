/**
 * A claim contention (append-contention.ts) that remembers lost claims on the given keys
 * (`<group>\u0000<stream>`), on a stopwatch that never moves: the container's claims there count as
 * contended, so a concurrent group's claims take ranges (docs/design.md, Range claims). Grant
 * pauses (receiver.ts `ShardGrants.pause`) run on the same stopwatch: they end only when it is advanced.
 */
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { FakeStopwatch } from './fake-stopwatch.js';

export function contendedClaims(keys: readonly string[], stopwatch = new FakeStopwatch()): Contention {
  const contention = new Contention(stopwatch, () => 0);
  const claim = contention.begin(keys);
  for (let i = 0; i < 5; i++) claim.lostRace();
  claim.settle();
  return contention;
}
