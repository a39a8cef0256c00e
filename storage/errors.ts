// Storage failures are GatewayErrors with STORAGE_* codes; this alias keeps call sites short.
import { GatewayError } from '../shared/errors/index.js';

export type StorageErrorCode = Extract<
  ConstructorParameters<typeof GatewayError>[0],
  `STORAGE_${string}`
>;

export class StorageError extends GatewayError<StorageErrorCode> {
  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'StorageError';
  }
}
