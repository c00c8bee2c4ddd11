import middy from '@middy/core';

/** GET /health: no auth, no dependencies; answers while the process is up. */
export const handler = middy().handler(async () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'ok' }),
}));
