import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { commitResultsOf, toSendInput } from './convert.js';
import { CommitBody, GroupParams } from './schemas.js';

/** POST /v1/groups/{group}/commit: acknowledge received messages; each entry succeeds or fails alone. */
export const handler = route({ params: GroupParams, body: CommitBody }, async ({ params, body }) => {
  const results = await container().queue.commit(
    params.group,
    body.entries.map((e) => ({
      receiptHandle: e.receiptHandle,
      publish: (e.publish ?? []).map(({ topic, ...send }) => ({ topic, ...toSendInput(send) })),
    })),
  );
  return json(200, { results: commitResultsOf(results) });
});
