/**
 * The one median every benchmark and soak script reports, so that a verdict quotes the figure
 * its table prints.
 *
 * @module
 */

/**
 * The median of `xs`: the middle value, or the mean of the two middle values for an even count.
 *
 * @param xs The values (not changed).
 * @returns Their median (NaN for none).
 */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
