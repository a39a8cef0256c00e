// The pending count in the tab title, so a held call is seen from another tab; the page's own
// title comes back when the queue is empty or the screen is left.
import { useEffect, useRef } from 'react';

export function useTabTitle(count: number): void {
  const original = useRef<string | null>(null);
  useEffect(() => {
    original.current ??= document.title;
    return () => {
      if (original.current !== null) document.title = original.current;
    };
  }, []);
  useEffect(() => {
    if (original.current === null) return;
    document.title = count > 0 ? `(${count}) Approvals · Agent Gateway` : original.current;
  }, [count]);
}
