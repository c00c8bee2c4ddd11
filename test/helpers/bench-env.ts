/**
 * A test table as the environment of containers built from it (buildContainer(loadConfig(process.env))),
 * as the bench's runtime sets it: the table, the endpoint, and a secrets key every container shares
 * (the message-id key is sealed with it, so a handle made by one container opens in another).
 * `restore` puts the environment back.
 */
import { randomBytes } from 'node:crypto';
import { testTable } from './stores.js';

export async function benchTableEnv(prefix: string) {
  const saved = { table: process.env.SLUICE_TABLE_NAME, endpoint: process.env.DYNAMODB_ENDPOINT, key: process.env.SLUICE_SECRETS_KEY };
  const made = await testTable(prefix);
  process.env.SLUICE_TABLE_NAME = made.table;
  process.env.DYNAMODB_ENDPOINT = made.endpoint;
  process.env.SLUICE_SECRETS_KEY = randomBytes(32).toString('base64');
  const restore = () => {
    const put = (name: string, value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));
    put('SLUICE_TABLE_NAME', saved.table);
    put('DYNAMODB_ENDPOINT', saved.endpoint);
    put('SLUICE_SECRETS_KEY', saved.key);
  };
  return { ...made, restore };
}
