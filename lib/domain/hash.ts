/**
 * FNV-1a (32 bit): a stable, well-spread hash of a short text, the same in
 * every process and version. Notice buckets and "ready now" index keys are
 * derived from it and stored, so it must never change.
 */
export const fnv1a32 = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};
