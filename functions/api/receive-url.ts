/**
 * Receive alone behind its own Lambda function URL (`entryPoint: 'functionUrl'`): the
 * `receive` function at 128 MB, so a long poll that mostly waits holds 128 MB instead of
 * the `api` function's 512 (docs/performance.md, "Idle consumers"). Any other route
 * answers 404 (405 for another method on the receive path). Bundles only receive's handler.
 */
import { functionUrlHandler } from '../commons/function-url-router.js';
import { handler as receive } from './receive.js';
import { routes } from './routes.js';

export const handler = functionUrlHandler(
  routes.filter((route) => route.entry === 'receive'),
  { receive },
);
