// Vite builds the console into dist/ with hashed asset names under /console/assets/ (served
// immutable by control-plane/console/). `npm run dev:console` runs the dev server against a
// running gateway: /graphql (HTTP and graphql-ws) is proxied to AGENT_GATEWAY_URL.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const gateway = process.env.AGENT_GATEWAY_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
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
