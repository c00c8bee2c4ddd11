import { container } from '../commons/container.js';
import { noContent, route } from '../commons/http.js';
import { TopicParams } from './schemas.js';

/** DELETE /v1/topics/{topic}: the topic and its messages are gone; subscriptions deliver nothing more from it. */
export const handler = route({ params: TopicParams }, async ({ params }) => {
  await container().admin.deleteTopic(params.topic);
  return noContent();
});
