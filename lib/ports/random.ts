import { randomBytes, randomInt } from 'node:crypto';
import { ulid } from 'ulid';
import type { Random } from './clock.js';

export const cryptoRandom: Random = {
  token: () => randomBytes(6).toString('base64url'),
  fraction: () => randomInt(0, 2 ** 47) / 2 ** 47,
  id: () => ulid(),
};
