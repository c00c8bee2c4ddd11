/**
 * Writes a range claim out as ordinary leases (docs/design.md, Range claims): a range stays a
 * range (`fr.<id>`, `fq.<id>`) until something but a commit of the whole range touches one of its
 * members — a commit of some of them, a visibility change, a claim that finds it expired, a
 * grantor that could not deliver all of it. That write needs each member's segment (leases
 * carry it, ranges do not): one Query of the segments holding the range.
 */
import type { CursorState, Lease, RangeOfLease } from '../domain/cursor.js';
import type { Stores } from './stores.js';

export interface NormaliseOptions {
  /** The cursor as read (else read here, consistently). */
  cursor?: CursorState;
  /** Members given back unattempted (the grantor's answer had no room for them): claimable now, their delivery not counted. */
  untried?: ReadonlySet<number>;
  /** Members that get no lease (the grantor passed over them: another tag, not live). */
  passed?: ReadonlySet<number>;
}

/**
 * Writes range `range` of the cursor of (`group`, `stream`) out as leases, if it still is a range;
 * resolves once it is not (written out here or by another writer, committed, or ended by a seek).
 * A member whose record is missing (a gap between epochs) gets no lease, as a claim passes over it.
 */
export async function normaliseRange(stores: Stores, group: string, stream: string, range: RangeOfLease, now: number, options: NormaliseOptions = {}): Promise<void> {
  const cursor = options.cursor ?? (await stores.cursors.get(group, stream, now));
  const members = [...(cursor?.leases.values() ?? [])].filter((lease) => lease.range?.id === range.id);
  const first = members[0];
  if (first === undefined) return;
  const segments = await stores.log.segmentsCovering(stream, range.start, range.start + range.n - 1);
  const leases: Lease[] = [];
  for (const member of members) {
    if (options.passed?.has(member.seq)) continue;
    const segment = segments.find((s) => s.seq <= member.seq && member.seq < s.seq + s.count);
    const record = segment?.records[member.seq - segment.seq];
    if (segment === undefined || record === undefined) continue;
    const untried = options.untried?.has(member.seq) === true;
    leases.push({
      seq: member.seq,
      expiresAt: untried ? now : first.expiresAt,
      token: member.token,
      deliveries: untried ? 0 : 1,
      segment: segment.seq,
      topic: undefined,
      pending: false,
    });
  }
  await stores.cursors.normalise(group, stream, range, first.expiresAt, leases, now);
}
