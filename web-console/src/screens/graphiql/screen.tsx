// GraphiQL over the control plane's /graphql, run as the signed-in key: queries and mutations go
// over HTTP with the key as Bearer (and the CSRF header), subscriptions over the console's
// graphql-ws socket, so GraphiQL sees exactly what this key may see and do. Everything it loads is
// a file of the console build: nothing from a CDN, no inline script or style outside the page's
// nonce, so it works offline under the console's CSP (tests/console/graphiql.test.ts).
//
// GraphiQL 4 (CodeMirror 5), not 5 (Monaco): Monaco adds <style> elements without a nonce and
// writes style attributes through innerHTML (microsoft/monaco-editor#271), which a CSP without
// 'unsafe-inline' for styles refuses, and its language services run in web workers that need
// bundling of their own; CodeMirror 5 styles through the CSSOM, which the CSP allows, and runs in
// the page. GraphiQL 3 does not accept React 19. GraphiQL's fonts are dropped from the build
// (vite.config.ts), and codemirror-graphql's peer range would pin the policy editor's
// @codemirror/language to 6.0.0 (package.json overrides it; GraphiQL 4 uses none of it).
// Its code and stylesheet are chunks of their own, fetched when this screen first opens (31 files,
// 1.1 MB, 354 kB gzip on 2026-11-27): the console's first page loads 525 kB of script, as before.
//
// Tabs, history and the last responses are kept in sessionStorage, like the key: a response may
// hold a secret (createApiKey's). `query`, `variables` and `operationName` in the page's URL open
// in a tab, so /graphql?query=… opened in a browser (redirected here) shows that operation.
import 'graphiql/style.css';
import './graphiql.css';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { useComputedColorScheme } from '@mantine/core';
import { GraphiQL } from 'graphiql';
import { useMemo, useState } from 'react';
import { GRAPHQL_PATH } from '../../client.ts';
import { useSession } from '../../session/session.tsx';

const DEFAULT_QUERY = `# Runs as the API key you signed in with;
# each field checks its scopes (docs/graphql.md).
# Ctrl-Enter runs, Ctrl-Space completes.
query Me {
  me {
    apiKeyId
    scopes
    tenant {
      name
    }
  }
}
`;

/** The operation named in the page's URL, if any (read once, when the screen opens). */
function operationInUrl(): { query?: string; variables?: string; operationName?: string } {
  const params = new URLSearchParams(window.location.search);
  const named: { query?: string; variables?: string; operationName?: string } = {};
  for (const key of ['query', 'variables', 'operationName'] as const) {
    const value = params.get(key);
    if (value) named[key] = value;
  }
  return named;
}

export default function GraphiQLScreen() {
  const session = useSession();
  const scheme = useComputedColorScheme('light');
  const [fromUrl] = useState(operationInUrl);
  const fetcher = useMemo(
    () =>
      createGraphiQLFetcher({
        url: GRAPHQL_PATH,
        headers: { ...session.authHeaders },
        wsClient: session.consoleClient.socket,
      }),
    [session],
  );
  return (
    <div className="console-graphiql">
      <GraphiQL
        fetcher={fetcher}
        storage={sessionStorage}
        defaultQuery={DEFAULT_QUERY}
        forcedTheme={scheme}
        {...fromUrl}
      />
    </div>
  );
}
