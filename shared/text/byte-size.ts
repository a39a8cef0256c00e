// A byte count as people read it: binary units (KiB, MiB) because every limit in the gateway is a
// power-of-two multiple, so `1048576` reads `1 MiB` and not `1.05 MB`. Whole numbers print without
// a fraction; others with at most one decimal.
const UNITS = ['bytes', 'KiB', 'MiB', 'GiB'] as const;

export function formatByteSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, '');
  return unit === 0 ? `${text} ${bytes === 1 ? 'byte' : 'bytes'}` : `${text} ${UNITS[unit]}`;
}
