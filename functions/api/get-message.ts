import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { MessageParams } from './schemas.js';

/** GET /v1/topics/{topic}/messages/{messageId}: the message and its delivery state in every group. */
export const handler = route({ params: MessageParams }, async ({ params }) =>
  json(200, await container().queue.getMessage(params.topic, params.messageId)),
);
