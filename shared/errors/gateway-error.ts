// The one error type of the gateway: a stable code from the registry, the message its template
// renders, and optional details. Call sites build errors with gatewayError(code, params): the
// wording and the status then come from the registry, never from the call site. HTTP handlers,
// the GraphQL error mapping and the CLI all read the registry through the code, so status and
// hint never drift from the code.
import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorCodeInfo,
  type ErrorMessageTemplate,
} from './codes.js';
import {
  fillTemplate,
  type NoParams,
  type PlaceholderName,
  type TemplateParams,
} from './template.js';

/** The subjects a code has hints of its own for (ErrorCodeInfo.hints); never for most codes. */
export type HintSubject<Code extends ErrorCode> = (typeof ERROR_CODES)[Code] extends {
  readonly hints: infer Hints;
}
  ? Extract<keyof Hints, string>
  : never;

export interface GatewayErrorOptions<Code extends ErrorCode = ErrorCode> {
  readonly cause?: unknown;
  /**
   * Machine-readable facts for clients (the limit that was hit, the field concerned). `issues`
   * (FieldIssue[]) and `docs` (a docs page) are the error body's own fields (error-body.ts).
   */
  readonly details?: Readonly<Record<string, unknown>>;
  /** Which of the code's subject hints applies, instead of its general hint. */
  readonly hintFor?: HintSubject<Code>;
}

/** The values a code's message template needs. */
export type ErrorParams<Code extends ErrorCode> = TemplateParams<ErrorMessageTemplate<Code>>;

/** Params are required when the template has placeholders, and may be left out when not. */
export type GatewayErrorArgs<Code extends ErrorCode> = [
  PlaceholderName<ErrorMessageTemplate<Code>>,
] extends [never]
  ? [params?: NoParams, options?: GatewayErrorOptions<Code>]
  : [params: ErrorParams<Code>, options?: GatewayErrorOptions<Code>];

export class GatewayError<Code extends ErrorCode = ErrorCode> extends Error {
  readonly code: Code;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly hintFor: HintSubject<Code> | undefined;

  /**
   * Takes a rendered message: only builders call it (gatewayError, and subclasses that render
   * through formatErrorMessage). Call sites use gatewayError.
   */
  constructor(code: Code, message: string, options?: GatewayErrorOptions<Code>) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.details = options?.details;
    this.hintFor = options?.hintFor;
  }

  get status(): number | null {
    return ERROR_CODES[this.code].status;
  }

  get hint(): string {
    const info: ErrorCodeInfo = ERROR_CODES[this.code];
    return (this.hintFor === undefined ? undefined : info.hints?.[this.hintFor]) ?? info.hint;
  }
}

/** Builds the error of a code: its message from the registry's template, filled with params. */
export function gatewayError<Code extends ErrorCode>(
  code: Code,
  ...[params, options]: GatewayErrorArgs<Code>
): GatewayError<Code> {
  return new GatewayError(code, formatErrorMessage(code, params), options);
}

/**
 * The message of a code without an Error around it, for answers that are decisions rather than
 * failures (an inspect deny carries a reasonCode and this message).
 */
export function formatErrorMessage<Code extends ErrorCode>(
  code: Code,
  params?: ErrorParams<Code> | NoParams,
): string {
  return fillTemplate(
    ERROR_CODES[code].message,
    params as Readonly<Record<string, string | number>> | undefined,
  );
}

/** The one-line form operators read in a terminal: `CODE: message (hint: …)`. */
export function formatErrorLine(error: unknown): string {
  if (error instanceof GatewayError) {
    return `${error.code}: ${error.message} (hint: ${error.hint})`;
  }
  if (error instanceof Error) return `UNEXPECTED: ${error.message}`;
  return `UNEXPECTED: ${String(error)}`;
}
