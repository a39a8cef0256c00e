// One clock for a whole screen: every countdown and age reads the same `now`, ticking each second,
// so an expired call leaves the list on the same tick its countdown reaches zero.
import { useEffect, useState } from 'react';

export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}
