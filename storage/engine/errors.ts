// Storage failures are GatewayErrors with STORAGE_* codes, built like every other error with
// gatewayError(). StorageError only names the family: `error instanceof StorageError` is true for
// any GatewayError whose code is a storage code, and narrows `code` to those codes. It is
// abstract because nothing constructs it.
import { type ErrorCode, GatewayError } from '../../shared/errors/index.js';

export type StorageErrorCode = Extract<ErrorCode, `STORAGE_${string}`>;

export abstract class StorageError extends GatewayError<StorageErrorCode> {
  static override [Symbol.hasInstance](value: unknown): value is StorageError {
    return value instanceof GatewayError && value.code.startsWith('STORAGE_');
  }
}
