// The file in the data directory where the first start writes the admin API key of tenant
// "default" (mode 0600). Commands that send an operator to the running gateway name it; kept
// apart from start-gateway.ts so they do not load the start-up code.
export const ADMIN_KEY_FILE = 'admin-api-key';
