import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { ProducerParams } from './schemas.js';

/** POST /v1/producers/{producerGroup}/rotate-secret: a new signing secret; the old one signs along for a day. */
export const handler = route({ params: ProducerParams }, async ({ params }) =>
  json(200, await container().transactions.rotateSecret(params.producerGroup)),
);
