import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// Built into dist/web, beside the server that serves it (src/server/spa.ts); no CDN, nothing fetched at run time.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // The CSP allows no inline script; vite's modulepreload polyfill would be one.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
