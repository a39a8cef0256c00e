// The public URL every process of a test's split deployment shares (AGENT_GATEWAY_PUBLIC_URL is
// required by `control-plane` and `data-plane`). Nothing listens there: tests call each process
// at its own address; tokens and proofs name this URL, as they would behind a reverse proxy.
export const SPLIT_PUBLIC_URL = 'http://gateway.test';
