// The gateway's public base URL (AGENT_GATEWAY_PUBLIC_URL): the base of status-list and context
// URLs written into credentials, the `htu` an agent proof must name, and later the OAuth issuer.
// A split deployment must configure it (one URL in front of every process); a single process
// without it uses the URL it listens on, learnt once the port is bound (port 0 picks one).

export class PublicUrl {
  #value: string | undefined;
  /** Whether the URL was configured rather than learnt from the listening socket. */
  readonly configured: boolean;

  constructor(configured?: string) {
    this.#value = configured === undefined ? undefined : withoutTrailingSlash(configured);
    this.configured = configured !== undefined;
  }

  /** The base URL, without a trailing slash. Known from the moment the process listens. */
  get(): string {
    if (this.#value === undefined) {
      // Requests only arrive once the process listens, which sets the URL: reaching this is a
      // composition bug, not an operator problem.
      throw new Error('the public URL is read before the process listens');
    }
    return this.#value;
  }

  /** The listening URL, used when none was configured. */
  learn(listeningUrl: string): void {
    this.#value ??= withoutTrailingSlash(listeningUrl);
  }
}

function withoutTrailingSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}
