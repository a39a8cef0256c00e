// The batched background writer behind the recorders: writes run one at a time in the order they
// were asked for, the queue drops and counts what exceeds its bound, a failed write is logged (not
// thrown) and loses only its batch, keyed items replace each other, and stop writes what is left.
// Every wait is for an event (a write starting, a line logged), never for time.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  BatchedWriter,
  type BatchedWriterOptions,
} from '../../../storage/engine/batched-writer.js';

interface LogLine {
  readonly msg: string;
  readonly dropped?: number;
  readonly err?: { message: string };
}

/** A real pino logger whose lines are kept, with a wait for the next one. */
function capturingLogger() {
  const lines: LogLine[] = [];
  let waiting: ((line: LogLine) => void) | undefined;
  const logger = pino(
    { level: 'warn' },
    {
      write(text: string) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        waiting?.(line);
        waiting = undefined;
      },
    },
  );
  const nextLine = () => new Promise<LogLine>((resolve) => (waiting = resolve));
  return { logger, lines, nextLine };
}

/** A write function whose calls are kept; each waits for `release` when `hold` is set. */
function recordingWrite() {
  const batches: string[][] = [];
  const started: (() => void)[] = [];
  let hold: Promise<void> | undefined;
  let failNext: Error | undefined;
  const write = async (batch: readonly string[]) => {
    batches.push([...batch]);
    for (const notify of started.splice(0)) notify();
    if (hold) await hold;
    if (failNext) {
      const error = failNext;
      failNext = undefined;
      throw error;
    }
  };
  return {
    write,
    batches,
    nextWrite: () => new Promise<void>((resolve) => started.push(resolve)),
    holdUntil: (gate: Promise<void> | undefined) => {
      hold = gate;
    },
    failNextWith: (error: Error) => {
      failNext = error;
    },
  };
}

function writer(
  write: (batch: readonly string[]) => Promise<void>,
  options: Partial<BatchedWriterOptions<string>> = {},
) {
  return new BatchedWriter<string>({
    write,
    intervalMs: 60_000,
    failureMessage: 'recording things failed',
    ...options,
  });
}

describe('BatchedWriter', () => {
  it('writes one batch at a time, in the order flushes were asked for', async () => {
    const target = recordingWrite();
    const batched = writer(target.write);
    let release!: () => void;
    target.holdUntil(new Promise<void>((resolve) => (release = resolve)));
    const firstStarted = target.nextWrite();
    batched.record('a');
    const first = batched.flush();
    await firstStarted;
    batched.record('b');
    const second = batched.flush();
    // The second write waits for the first, however long it takes: not started after a full
    // turn of the event loop.
    await new Promise(setImmediate);
    expect(target.batches).toEqual([['a']]);
    target.holdUntil(undefined);
    release();
    await Promise.all([first, second]);
    expect(target.batches).toEqual([['a'], ['b']]);
    await batched.stop();
  });

  it('writes at once when the queue reaches flushAt, and at each interval', async () => {
    const target = recordingWrite();
    const batched = writer(target.write, { flushAt: 2 });
    const written = target.nextWrite();
    batched.record('a');
    batched.record('b');
    await written;
    expect(target.batches).toEqual([['a', 'b']]);
    await batched.stop();

    const timed = recordingWrite();
    const ticking = writer(timed.write, { intervalMs: 1 });
    const tick = timed.nextWrite();
    ticking.record('c');
    await tick;
    expect(timed.batches).toEqual([['c']]);
    await ticking.stop();
  });

  it('drops what exceeds maxPending, counts it, and logs the count at the next write', async () => {
    const target = recordingWrite();
    const log = capturingLogger();
    const batched = writer(target.write, {
      maxPending: 2,
      logger: log.logger,
      droppedMessage: 'things not recorded',
    });
    expect([batched.record('a'), batched.record('b'), batched.record('c')]).toEqual([
      true,
      true,
      false,
    ]);
    batched.record('d');
    expect(batched.pending).toBe(2);
    await batched.flush();
    expect(target.batches).toEqual([['a', 'b']]);
    expect(log.lines).toEqual([
      expect.objectContaining({ msg: 'things not recorded', dropped: 2 }),
    ]);
    // The count starts again from zero.
    batched.record('e');
    await batched.stop();
    expect(target.batches).toEqual([['a', 'b'], ['e']]);
    expect(log.lines).toHaveLength(1);
  });

  it('logs a failed background write instead of throwing, and writes the next batch', async () => {
    const target = recordingWrite();
    const log = capturingLogger();
    const batched = writer(target.write, { flushAt: 1, logger: log.logger });
    target.failNextWith(new Error('database away'));
    const logged = log.nextLine();
    batched.record('lost');
    expect(await logged).toMatchObject({
      msg: 'recording things failed',
      err: { message: 'database away' },
    });
    batched.record('kept');
    await batched.flush();
    expect(target.batches).toEqual([['lost'], ['kept']]);
    await batched.stop();
  });

  it('rejects an explicit flush whose write fails; the next flush still writes', async () => {
    const target = recordingWrite();
    const batched = writer(target.write);
    batched.record('lost');
    target.failNextWith(new Error('database away'));
    await expect(batched.flush()).rejects.toThrow('database away');
    batched.record('kept');
    await batched.flush();
    expect(target.batches).toEqual([['lost'], ['kept']]);
    await batched.stop();
  });

  it('queues keyed items once, the last one kept in the first one’s place', async () => {
    const target = recordingWrite();
    const batched = writer(target.write, { keyOf: (item) => item[0]!, maxPending: 2 });
    batched.record('a1');
    batched.record('b1');
    // Full, but a replacement takes no new place.
    expect(batched.record('a2')).toBe(true);
    expect(batched.record('c1')).toBe(false);
    await batched.stop();
    expect(target.batches).toEqual([['a2', 'b1']]);
  });

  it('stop writes what is queued, and logs rather than throws when that write fails', async () => {
    const target = recordingWrite();
    const log = capturingLogger();
    const batched = writer(target.write, { logger: log.logger });
    batched.record('a');
    await batched.stop();
    expect(target.batches).toEqual([['a']]);

    const failing = writer(target.write, { logger: log.logger });
    failing.record('b');
    target.failNextWith(new Error('database away'));
    await expect(failing.stop()).resolves.toBeUndefined();
    expect(target.batches).toEqual([['a'], ['b']]);
    expect(log.lines).toEqual([expect.objectContaining({ msg: 'recording things failed' })]);
  });
});
