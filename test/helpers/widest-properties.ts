/**
 * Messages at the size limit (`Limits.messageMaxBytes`), for the tests that drive it at its maximum:
 * names of three-byte characters (the most bytes a character of the API's limits takes) and
 * property values of ASCII filling what is left, exactly.
 */
import { Limits } from '../../lib/domain/model.js';

/** A 128-character name of three-byte characters (UTF-8), distinct for each `n`. */
export const wide = (n: number): string => String.fromCodePoint(0x4e00 + n).repeat(128);

/**
 * Values for `names` (in order) of `room` ASCII bytes in all, each at most
 * `Limits.propertyValueMaxLength`, spread evenly; throws when they cannot hold `room`.
 */
export function propertiesFilling(names: readonly string[], room: number): Record<string, string> {
  const properties: Record<string, string> = {};
  let left = room;
  names.forEach((name, i) => {
    const length = Math.max(0, Math.min(Limits.propertyValueMaxLength, Math.ceil(left / (names.length - i))));
    properties[name] = 'v'.repeat(length);
    left -= length;
  });
  if (left !== 0) throw new Error(`property values cannot hold ${room} bytes (${left} left)`);
  return properties;
}
