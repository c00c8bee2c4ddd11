import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { TopicParams } from './schemas.js';

/** POST /v1/topics/{topic}/purge: every deliverable and scheduled message of the topic is dropped. */
export const handler = route({ params: TopicParams }, async ({ params }) => json(200, await container().admin.purgeTopic(params.topic)));
