/** A shuffled copy of `items` (Fisher–Yates), `fraction` uniform in [0, 1): one call per item but the first. */
export const shuffle = <T>(items: readonly T[], fraction: () => number): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(fraction() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};
