// Who is signed in: the API key, its scopes and tenant (from the `me` query), and the GraphQL
// client built for that key. Signing in checks the key against /graphql before keeping it.

import { Client, fetchExchange } from '@urql/core';
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from 'react';
import { Provider } from 'urql';
import { authHeaders, type ConsoleClient, createConsoleClient, GRAPHQL_PATH } from '../client.ts';
import { graphql, type ResultOf } from '../graphql.ts';
import { forgetApiKey, readStoredApiKey, storeApiKey } from './api-key-store.ts';

const MeQuery = graphql(`
  query ConsoleMe {
    me {
      apiKeyId
      scopes
      tenant { id name displayName }
    }
  }
`);

export type Viewer = ResultOf<typeof MeQuery>['me'];

export interface Session {
  readonly viewer: Viewer;
  readonly consoleClient: ConsoleClient;
  /** The headers of a REST request to the gateway with the signed-in key (GraphQL has its client). */
  readonly authHeaders: Readonly<Record<string, string>>;
  hasScope(scope: string): boolean;
  signOut(): void;
}

interface SessionState {
  readonly session: Session | null;
  readonly restoring: boolean;
  signIn(apiKey: string): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

/** Why a key was refused, in words an operator can act on. */
export class SignInError extends Error {}

async function fetchViewer(apiKey: string): Promise<Viewer> {
  // A one-off client: the session's own (with its socket) is made only for a key that works.
  const probe = new Client({
    url: GRAPHQL_PATH,
    exchanges: [fetchExchange],
    fetchOptions: { headers: authHeaders(apiKey) },
    requestPolicy: 'network-only',
  });
  const result = await probe.query(MeQuery, {}).toPromise();
  if (result.data) return result.data.me;
  const status = (result.error?.response as Response | undefined)?.status;
  if (status === 401) {
    throw new SignInError('This API key was not accepted: it is unknown, revoked or expired.');
  }
  if (result.error?.networkError && status === undefined) {
    throw new SignInError('The gateway cannot be reached. Is it running?');
  }
  throw new SignInError(result.error?.message ?? 'The gateway gave no answer.');
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [signedIn, setSignedIn] = useState<{
    viewer: Viewer;
    apiKey: string;
    client: ConsoleClient;
  } | null>(null);
  const [restoring, setRestoring] = useState(() => readStoredApiKey() !== null);

  const signIn = useCallback(async (typed: string) => {
    const apiKey = typed.trim();
    const viewer = await fetchViewer(apiKey);
    storeApiKey(apiKey);
    setSignedIn({ viewer, apiKey, client: createConsoleClient(apiKey) });
  }, []);

  useEffect(() => {
    const stored = readStoredApiKey();
    if (!stored) return;
    signIn(stored)
      .catch(() => forgetApiKey())
      .finally(() => setRestoring(false));
  }, [signIn]);

  const session = useMemo<Session | null>(() => {
    if (!signedIn) return null;
    const scopes = new Set(signedIn.viewer.scopes);
    return {
      viewer: signedIn.viewer,
      consoleClient: signedIn.client,
      authHeaders: authHeaders(signedIn.apiKey),
      hasScope: (scope) => scopes.has(scope),
      signOut: () => {
        forgetApiKey();
        signedIn.client.dispose();
        setSignedIn(null);
      },
    };
  }, [signedIn]);

  const state = useMemo(() => ({ session, restoring, signIn }), [session, restoring, signIn]);
  return (
    <SessionContext.Provider value={state}>
      {session ? <Provider value={session.consoleClient.client}>{children}</Provider> : children}
    </SessionContext.Provider>
  );
}

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSessionState outside SessionProvider');
  return state;
}

/** The signed-in session; only inside the signed-in part of the app. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('useSession without a signed-in session');
  return session;
}
