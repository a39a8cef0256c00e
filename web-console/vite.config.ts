// Vite builds the console into dist/ with hashed asset names under /console/assets/ (served
// immutable by control-plane/console/). `npm run dev:console` runs the dev server against a
// running gateway: /graphql (HTTP and graphql-ws) is proxied to AGENT_GATEWAY_URL.
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const gateway = process.env.AGENT_GATEWAY_URL ?? 'http://127.0.0.1:8080';

/**
 * GraphiQL's stylesheet carries its fonts (Roboto, Fira Code: 350 kB) as data: URLs, which the
 * console's CSP (font-src 'self') refuses, one violation per font. They are dropped from the
 * build, and GraphiQL uses the console's fonts (screens/graphiql/graphiql.css).
 */
function graphiqlWithoutInlinedFonts(): Plugin {
  return {
    name: 'agent-gateway:graphiql-without-inlined-fonts',
    enforce: 'pre',
    transform(code, id) {
      if (!/\/node_modules\/graphiql\/dist\/style\.css$/.test(id.split('?')[0] ?? '')) return null;
      return { code: code.replace(/@font-face\s*\{[^}]*url\(data:font\/[^}]*\}/g, ''), map: null };
    },
  };
}

export default defineConfig({
  base: '/console/',
  plugins: [react(), graphiqlWithoutInlinedFonts()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No module preload polyfill: it is an inline script, which the console's CSP forbids.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1500,
  },
  server: {
    port: Number(process.env.CONSOLE_DEV_PORT ?? 5173),
    proxy: {
      '/graphql': { target: gateway, ws: true, changeOrigin: true },
      '/api': { target: gateway, changeOrigin: true },
    },
  },
});
