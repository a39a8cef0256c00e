// The one error type of the gateway: a stable code from the registry, a message for humans, and
// optional details. HTTP handlers, the GraphQL error mapping and the CLI all read the registry
// through the code, so status and hint never drift from the code.
import { ERROR_CODES, type ErrorCode } from './codes.js';

export class GatewayError<Code extends ErrorCode = ErrorCode> extends Error {
  readonly code: Code;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: Code,
    message: string,
    options?: { cause?: unknown; details?: Readonly<Record<string, unknown>> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.details = options?.details;
  }

  get status(): number | null {
    return ERROR_CODES[this.code].status;
  }

  get hint(): string {
    return ERROR_CODES[this.code].hint;
  }
}

/** The one-line form operators read in a terminal: `CODE: message (hint: …)`. */
export function formatErrorLine(error: unknown): string {
  if (error instanceof GatewayError) {
    return `${error.code}: ${error.message} (hint: ${error.hint})`;
  }
  if (error instanceof Error) return `UNEXPECTED: ${error.message}`;
  return `UNEXPECTED: ${String(error)}`;
}
