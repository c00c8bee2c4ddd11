/**
 * The whole v1 API behind one Lambda function URL (`entryPoint: 'functionUrl'`, the
 * default deployment): the `api` function finds each request's route
 * (functions/commons/function-url-router.ts) and runs its handler. It answers receive
 * too, so a caller that knows only this URL still works; the SDK and CLI send receives
 * to the `receive` function's own URL when given it (functions/api/receive-url.ts).
 */
import { functionUrlHandler } from '../commons/function-url-router.js';
import { routeHandlers } from './route-handlers.js';
import { routes } from './routes.js';

export const handler = functionUrlHandler(routes, routeHandlers);
