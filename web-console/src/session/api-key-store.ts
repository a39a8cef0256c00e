// Where the signed-in API key lives: sessionStorage (this tab only, gone when it closes), never
// localStorage, a cookie or a URL. Sign-out removes it.
const STORAGE_KEY = 'agent-gateway.console.api-key';

export function readStoredApiKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeApiKey(apiKey: string): void {
  sessionStorage.setItem(STORAGE_KEY, apiKey);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
