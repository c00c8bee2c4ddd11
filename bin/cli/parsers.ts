/** Option and argument parsers of the `sluice` commands: a value that does not parse is a usage error (exit code 2). */
import { InvalidArgumentError } from 'commander';
import type { Subscription } from '../../lib/client/types.js';

/** An integer from `min` to `max`, named in the error as `name` (the option). */
export const integer = (name: string, min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}.`);
  }
  return n;
};

/** A number (decimals allowed) from `min` to `max`, named in the error as `name` (the option). */
export const decimal = (name: string, min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || n < min || n > max) {
    throw new InvalidArgumentError(`${name} must be a number from ${min} to ${max}.`);
  }
  return n;
};

/** A repeatable option's values, in order. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A repeatable `NAME=VALUE` (the value may hold `=`). */
export const property = (value: string, previous: Record<string, string> = {}) => {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`'${value}' is not NAME=VALUE.`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
};

/** `orders` or `orders:created,paid` (a topic and its tag filter). */
export const subscription = (value: string, previous: Subscription[] = []): Subscription[] => {
  const [topic, tags] = value.split(':', 2);
  if (!topic) throw new InvalidArgumentError(`'${value}' is not TOPIC or TOPIC:TAG,TAG.`);
  return [...previous, tags ? { topic, tags: tags.split(',').filter(Boolean) } : { topic }];
};

/** Epoch milliseconds (digits only) or an RFC 3339 time, passed on as given. */
export const deliverAt = (value: string): string | number => (/^\d+$/.test(value) ? Number(value) : value);
