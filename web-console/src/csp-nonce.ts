// The nonce of this page load's Content-Security-Policy, from the meta tag the gateway writes
// into index.html (empty under `vite` dev, which sets no CSP).
export function cspNonce(): string {
  return document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content') ?? '';
}
