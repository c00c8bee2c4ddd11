import { container } from '../commons/container.js';
import { noContent, route } from '../commons/http.js';
import { MessageParams } from './schemas.js';

/** DELETE /v1/topics/{topic}/messages/{messageId}: cancel a message that is still scheduled. */
export const handler = route({ params: MessageParams }, async ({ params }) => {
  await container().queue.cancel(params.topic, params.messageId);
  return noContent();
});
