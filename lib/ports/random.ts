/** Randomness is injected so lease tokens, ids and partition choices test deterministically. */
import { randomBytes, randomInt } from 'node:crypto';
import { ulid } from 'ulid';

export interface Random {
  /** A short random token (lease tokens). */
  token(): string;
  /** A float in [0, 1) (partition choice, jitter). */
  fraction(): number;
  /** A new unique, time-ordered id (ULID). */
  id(): string;
}

export const cryptoRandom: Random = {
  token: () => randomBytes(6).toString('base64url'),
  fraction: () => randomInt(0, 2 ** 47) / 2 ** 47,
  id: () => ulid(),
};
