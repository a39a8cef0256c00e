export {
  type CodeInfo,
  ERROR_CODES,
  type ErrorCode,
  type ErrorCodeInfo,
  type ErrorMessageTemplate,
  isErrorCode,
} from './codes.js';
export {
  buildErrorBody,
  type ErrorBody,
  errorBodySchema,
  type FieldIssue,
  fieldIssueSchema,
} from './error-body.js';
export {
  type ErrorParams,
  formatErrorLine,
  formatErrorMessage,
  GatewayError,
  type GatewayErrorArgs,
  type GatewayErrorOptions,
  gatewayError,
  type HintSubject,
} from './gateway-error.js';
export {
  isPlaceholderName,
  listPlaceholders,
  type NoParams,
  type PlaceholderName,
  type TemplateParams,
} from './template.js';
