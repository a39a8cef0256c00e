import { describe, expect, it } from 'vitest';
import { formatByteSize } from '../../../shared/text/byte-size.js';

describe('formatByteSize', () => {
  it.each([
    [1, '1 byte'],
    [1000, '1000 bytes'],
    [1024, '1 KiB'],
    [64 * 1024, '64 KiB'],
    [512 * 1024, '512 KiB'],
    [1536, '1.5 KiB'],
    [1024 * 1024, '1 MiB'],
    [4 * 1024 * 1024, '4 MiB'],
    [1024 ** 3 * 2, '2 GiB'],
  ])('%d bytes read %s', (bytes, text) => {
    expect(formatByteSize(bytes)).toBe(text);
  });
});
