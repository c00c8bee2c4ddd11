import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { toSendInput } from './convert.js';
import { SendBody, TopicParams } from './schemas.js';

/** POST /v1/topics/{topic}/messages: send one message. */
export const handler = route({ params: TopicParams, body: SendBody }, async ({ params, body }) => {
  const result = await container().queue.send(params.topic, toSendInput(body));
  const location = `/v1/topics/${encodeURIComponent(params.topic)}/messages/${encodeURIComponent(result.messageId)}`;
  return json(201, result, { location });
});
