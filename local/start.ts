/**
 * `npm start`: Sluice on this machine. Configuration (environment):
 *   HOST (127.0.0.1), PORT (3000), SLUICE_API_TOKEN (bearer token; required
 *   to bind beyond loopback), DYNAMODB_ENDPOINT (use an existing DynamoDB),
 *   SLUICE_DATA_DIR (.data), SLUICE_TABLE_NAME (sluice).
 */
import { resolve } from 'node:path';
import { JavaMissingError } from './dynamo.js';
import { startLocal, UnsafeBindError } from './runtime.js';

const env = process.env;
// This runtime targets Node 20+ on laptops; the SDK's notice about its own future Node 22 floor is noise here.
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const port = Number(env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number (0-65535), not '${env.PORT}'.`);
  process.exit(2);
}

try {
  const runtime = await startLocal({
    host: env.HOST ?? '127.0.0.1',
    port,
    token: env.SLUICE_API_TOKEN || undefined,
    tableName: env.SLUICE_TABLE_NAME ?? 'sluice',
    endpoint: env.DYNAMODB_ENDPOINT || undefined,
    dataDir: resolve(env.SLUICE_DATA_DIR ?? '.data'),
    checkbackEverySeconds: Number(env.SLUICE_CHECKBACK_EVERY_SECONDS ?? 60) || 60,
    buildConsoleAtStart: true,
  });
  console.log(`Sluice is listening on ${runtime.url} (DynamoDB at ${runtime.endpoint}).`);
  console.log(`Web console: ${runtime.url}/console`);
  console.log(env.SLUICE_API_TOKEN ? 'Authentication: Bearer token (SLUICE_API_TOKEN).' : 'Authentication: none (loopback only).');
  console.log('Press Ctrl-C to stop.');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping Sluice and DynamoDB Local...`);
    runtime.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (error) {
  if (error instanceof JavaMissingError) {
    console.error(error.message);
    process.exit(3);
  }
  if (error instanceof UnsafeBindError) {
    console.error(error.message);
    process.exit(2);
  }
  if (error instanceof Error && 'code' in error && error.code === 'EADDRINUSE') {
    console.error(`Port ${port} is already in use: stop the other process or set PORT.`);
    process.exit(2);
  }
  throw error;
}
