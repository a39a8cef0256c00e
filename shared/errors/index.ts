export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo, isErrorCode } from './codes.js';
export { formatErrorLine, GatewayError } from './gateway-error.js';
