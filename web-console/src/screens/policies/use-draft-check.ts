// Checks the draft through the batch endpoint once typing pauses, and only keeps the answer for
// the text it was asked about: a newer draft aborts the older request, so the markers never
// describe text that is no longer there.
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useState } from 'react';
import { type BatchItem, checkPolicy } from './batch-client.ts';

export const CHECK_DELAY_MS = 400;

export interface DraftCheck {
  /** The text the answer is about; compare with the draft before trusting it. */
  readonly source: string;
  readonly item: BatchItem | null;
  readonly failure: string | null;
}

export function useDraftCheck(draft: string): { check: DraftCheck | null; checking: boolean } {
  const [debounced] = useDebouncedValue(draft, CHECK_DELAY_MS);
  const [check, setCheck] = useState<DraftCheck | null>(null);
  useEffect(() => {
    if (debounced.trim() === '') {
      setCheck({ source: debounced, item: null, failure: null });
      return;
    }
    const controller = new AbortController();
    checkPolicy(debounced, [], controller.signal).then(
      (item) => setCheck({ source: debounced, item, failure: null }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const failure = error instanceof Error ? error.message : String(error);
        setCheck({ source: debounced, item: null, failure });
      },
    );
    return () => controller.abort();
  }, [debounced]);
  return { check, checking: check?.source !== draft };
}
