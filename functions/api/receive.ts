import { container } from '../commons/container.js';
import { json, route } from '../commons/http.js';
import { GroupParams, ReceiveBody } from './schemas.js';

/** POST /v1/groups/{group}/receive: lease up to maxMessages messages, long-polling up to waitSeconds. */
export const handler = route({ params: GroupParams, body: ReceiveBody }, async ({ params, body, context }) =>
  json(200, {
    // Answer well before the function's timeout: leased messages must reach the caller.
    messages: await container().queue.receive(params.group, { ...body, answerBy: Date.now() + context.getRemainingTimeInMillis() - 5000 }),
  }),
);
