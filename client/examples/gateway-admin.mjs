// What the examples share: where the gateway is (GATEWAY_URL) and the admin API key `npm start`
// wrote (ADMIN_KEY_FILE), both from the environment, and requests made with that key.
//
// An example is often the first thing a new user runs, so what goes wrong before it reaches its
// point (nothing listening at GATEWAY_URL, no key file, a key of another gateway, a refused
// change) ends it with ONE line on stderr naming the setting to look at, and exit code 1: an
// undici stack trace says none of that. `fail` throws (so an example's `finally` blocks run),
// and the uncaught error is printed as that one line.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

class ExampleFailure extends Error {}

/** Ends the example with `message` as its one line on stderr, after its `finally` blocks. */
export function fail(message) {
  throw new ExampleFailure(message);
}

process.on('uncaughtException', (error) => {
  if (error instanceof ExampleFailure) process.stderr.write(`${error.message}\n`);
  else if (isUnreachable(error)) process.stderr.write(`${unreachableLine(error)}\n`);
  else console.error(error);
  process.exit(1);
});

/** The gateway's base URL: GATEWAY_URL, default http://127.0.0.1:8080 (`npm start`). */
export const gatewayUrl = (() => {
  const value = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    fail(`GATEWAY_URL is not an http(s) URL: ${value}`);
  }
  return value.replace(/\/+$/, '');
})();

const keyFile =
  process.env.ADMIN_KEY_FILE ?? join(process.env.AGENT_GATEWAY_DATA_DIR ?? 'data', 'admin-api-key');

/** True for what fetch throws when nothing answers (refused, unknown host, reset, bad port). */
function isUnreachable(error) {
  for (let cause = error; cause; cause = cause.cause) {
    if (cause instanceof TypeError && cause.message === 'fetch failed') return true;
  }
  return false;
}

/** The one line for an unreachable gateway, with the cause (ECONNREFUSED, ENOTFOUND, …). */
function unreachableLine(error) {
  let detail = error;
  while (detail.cause) detail = detail.cause;
  return (
    `cannot reach the gateway at ${gatewayUrl} (GATEWAY_URL): is \`npm start\` running? ` +
    `(${detail.code ?? detail.message})`
  );
}

async function readAdminKey() {
  try {
    return (await readFile(keyFile, 'utf8')).trim();
  } catch (error) {
    fail(
      error.code === 'ENOENT'
        ? `no admin API key at ${keyFile} (ADMIN_KEY_FILE): \`npm start\` writes it on its first start in this folder`
        : `cannot read the admin API key at ${keyFile} (ADMIN_KEY_FILE): ${error.message}`,
    );
  }
}

/**
 * The admin key and requests made with it: `graphql` answers the data or ends the example with
 * the gateway's refusal in one line; `post` answers the REST status and body.
 */
export async function connectAsAdmin() {
  const key = await readAdminKey();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const refusedKey = (answer) =>
    fail(
      `the gateway at ${gatewayUrl} (GATEWAY_URL) refused the admin API key in ${keyFile} ` +
        `(ADMIN_KEY_FILE): ${answer?.message ?? 'unauthorized'}; is it this gateway's key?`,
    );
  return {
    key,
    async graphql(query, variables = {}) {
      const response = await fetch(`${gatewayUrl}/graphql`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query, variables }),
      });
      const answer = await response.json().catch(() => null);
      if (response.status === 401) refusedKey(answer);
      const error = answer?.errors?.[0];
      if (error || !answer?.data) {
        const code = error?.extensions?.code;
        fail(
          `GraphQL ${error?.path?.join('.') ?? `answered ${response.status}`}: ` +
            `${error?.message ?? 'no data'}${code ? ` (${code})` : ''}`,
        );
      }
      return answer.data;
    },
    async post(path, body) {
      const response = await fetch(`${gatewayUrl}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => null);
      if (response.status === 401) refusedKey(answer);
      return { status: response.status, body: answer };
    },
  };
}

/**
 * A mutation's union result: the success, or the example ends with its Problem (code, message)
 * in one line. Select `... on Problem { code message }` beside the success.
 */
export function succeeded(what, result) {
  if (typeof result?.code === 'string' && typeof result.message === 'string') {
    fail(`${what}: ${result.message} (${result.code})`);
  }
  return result;
}
