import { container } from '../commons/container.js';
import { RECEIVE_ANSWER_MARGIN_MS } from '../../lib/services/queue-service.js';
import { json, route } from '../commons/http.js';
import { commitResultsOf } from './convert.js';
import { GroupParams, ReceiveBody } from './schemas.js';

/**
 * POST /v1/groups/{group}/receive: lease up to maxMessages messages,
 * long-polling up to waitSeconds; with `commit`, commit those handles first;
 * with `park`, answer a doorbell instead of long-polling (AWS).
 */
export const handler = route({ params: GroupParams, body: ReceiveBody }, async ({ params, body, context }) => {
  const { commit, ...rest } = body;
  const queue = container().queue;
  // Answer well before the function's timeout: leased messages must reach the caller.
  const request = { ...rest, answerBy: Date.now() + context.getRemainingTimeInMillis() - RECEIVE_ANSWER_MARGIN_MS };
  if (!commit) {
    const { messages, doorbell } = await queue.receiveOrPark(params.group, request);
    return json(200, { messages, ...(doorbell ? { doorbell } : {}) });
  }
  const { commitResults, messages, doorbell } = await queue.commitAndReceive(params.group, commit, request);
  return json(200, { messages, commitResults: commitResultsOf(commitResults), ...(doorbell ? { doorbell } : {}) });
});
