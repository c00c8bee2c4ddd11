/**
 * Encodings that stored keys are made of (adapters/dynamodb/keys.ts; the
 * notice bucket of a shard key). Items written by one version are found by
 * the next through them: they must never change.
 */

/** `digits` left-padded with zeros to `width`, so that keys of one width sort as numbers. */
export const zeroPad = (digits: number | string, width: number): string => String(digits).padStart(width, '0');

/** FNV-1a (32 bit): a stable, well-spread hash of a short text, the same in every process and version. */
export const fnv1a32 = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};
