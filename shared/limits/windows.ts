// Fixed windows: a limit's window starts at a multiple of `windowSeconds` since the Unix epoch,
// on the database's clock (a 86 400 s window resets at 00:00 UTC). Pure arithmetic on seconds.

/** The start (epoch seconds) of the window that holds `nowSeconds`. */
export function windowStartOf(nowSeconds: number, windowSeconds: number): number {
  return Math.floor(nowSeconds / windowSeconds) * windowSeconds;
}

/** Whole seconds from `nowSeconds` to the end of its window, at least 1 (a Retry-After value). */
export function secondsToReset(nowSeconds: number, windowSeconds: number): number {
  const end = windowStartOf(nowSeconds, windowSeconds) + windowSeconds;
  return Math.max(1, Math.ceil(end - nowSeconds));
}
