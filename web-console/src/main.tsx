// The console's entry: Mantine (styles, colour scheme, notifications, modals), the session, and the
// router under /console. The page's CSP nonce (a meta tag the gateway adds to index.html) is
// handed to Mantine and CodeMirror for the style elements they create; scripts need none.
import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import '@mantine/charts/styles.css';
import { createTheme, localStorageColorSchemeManager, MantineProvider } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import { Notifications } from '@mantine/notifications';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { ConsoleShell } from './app-shell.tsx';
import { cspNonce } from './csp-nonce.ts';
import { SessionProvider, useSessionState } from './session/session.tsx';
import { SignIn } from './session/sign-in.tsx';

const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'sm' });
// Only the colour scheme choice is kept in localStorage; never the key.
const colorSchemeManager = localStorageColorSchemeManager({ key: 'agent-gateway.console.scheme' });

function Root() {
  const { session, restoring } = useSessionState();
  if (restoring) return null;
  return session ? <ConsoleShell /> : <SignIn />;
}

// react-remove-scroll (Mantine's Modal and Drawer lock scrolling with it) gives the <style> it
// adds the nonce of the webpack global, and none otherwise: without this the first dialog opened
// breaks the CSP.
(globalThis as { __webpack_nonce__?: string }).__webpack_nonce__ = cspNonce();

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      colorSchemeManager={colorSchemeManager}
      getStyleNonce={cspNonce}
    >
      <Notifications />
      <ModalsProvider>
        <SessionProvider>
          <Router base="/console">
            <Root />
          </Router>
        </SessionProvider>
      </ModalsProvider>
    </MantineProvider>
  </StrictMode>,
);
