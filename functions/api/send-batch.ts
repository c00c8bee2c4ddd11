import { toProblem } from '../../lib/http/problem.js';
import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { toSendInput } from './convert.js';
import { SendBatchBody, TopicParams } from './schemas.js';

/** POST /v1/topics/{topic}/messages/batch: up to 100 sends; each entry succeeds or fails alone. */
export const handler = route({ params: TopicParams, body: SendBatchBody }, async ({ params, body }) => {
  const results = await container().queue.sendBatch(params.topic, body.entries.map(toSendInput));
  return json(200, {
    results: results.map((r) => ('error' in r ? { index: r.index, error: toProblem(r.error).problem } : { index: r.index, ...r.result })),
  });
});
