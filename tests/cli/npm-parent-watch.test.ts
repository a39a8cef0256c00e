// The npm parent watch (cli/npm-parent-watch.ts) on a fake clock and a fake parent pid; the real
// processes (npm killed outright, the gateway stopping) are tests/cli/start-under-npm.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { POLL_MS, watchNpmParent } from '../../cli/npm-parent-watch.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('watchNpmParent', () => {
  it('under npm, reports the former parent once, when the parent pid changes', () => {
    vi.useFakeTimers();
    let parent = 4242;
    const gone: number[] = [];
    watchNpmParent({ env: { npm_lifecycle_event: 'start' }, parentPid: () => parent }, (pid) =>
      gone.push(pid),
    );
    vi.advanceTimersByTime(POLL_MS * 4);
    expect(gone).toEqual([]);
    parent = 1;
    vi.advanceTimersByTime(POLL_MS);
    expect(gone).toEqual([4242]);
    vi.advanceTimersByTime(POLL_MS * 4);
    expect(gone).toEqual([4242]);
  });

  it('outside npm, never reports: a gateway left running by its shell outlives it', () => {
    vi.useFakeTimers();
    let parent = 4242;
    const gone: number[] = [];
    watchNpmParent({ env: {}, parentPid: () => parent }, (pid) => gone.push(pid));
    parent = 1;
    vi.advanceTimersByTime(POLL_MS * 4);
    expect(gone).toEqual([]);
  });

  it('stops watching when told to', () => {
    vi.useFakeTimers();
    let parent = 4242;
    const gone: number[] = [];
    const unwatch = watchNpmParent(
      { env: { npm_lifecycle_event: 'start' }, parentPid: () => parent },
      (pid) => gone.push(pid),
    );
    unwatch();
    parent = 1;
    vi.advanceTimersByTime(POLL_MS * 4);
    expect(gone).toEqual([]);
  });
});
