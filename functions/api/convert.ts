import type { z } from 'zod';
import type { SendInput } from '../../lib/domain/model.js';
import type { CommitResult } from '../../lib/services/committer.js';
import { toProblem } from '../../lib/http/problem.js';
import type { SendBody } from './schemas.js';

/** A validated send body as the service's input (deliverAt normalised to epoch ms). */
export const toSendInput = (
  body: Omit<z.output<typeof SendBody>, 'delaySeconds' | 'deliverAt' | 'dedupId' | 'transaction'> &
    Partial<Pick<z.output<typeof SendBody>, 'delaySeconds' | 'deliverAt' | 'dedupId' | 'transaction'>>,
): SendInput => ({
  body: body.body,
  encoding: body.encoding,
  tag: body.tag,
  keys: body.keys ?? [],
  properties: body.properties ?? {},
  shardKey: body.shardKey,
  delaySeconds: body.delaySeconds,
  deliverAt: typeof body.deliverAt === 'string' ? Date.parse(body.deliverAt) : body.deliverAt,
  dedupId: body.dedupId,
  transaction:
    'transaction' in body && body.transaction
      ? { producerGroup: body.transaction.producerGroup, checkAfterSeconds: body.transaction.checkAfterSeconds }
      : undefined,
});

/** Commit outcomes as the API answers them: a status, or the error as problem+json. */
export const commitResultsOf = (results: CommitResult[]) =>
  results.map((r) => ('error' in r ? { receiptHandle: r.receiptHandle, error: toProblem(r.error).problem } : r));
