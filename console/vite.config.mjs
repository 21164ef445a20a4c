// Builds the console into dist/console at `npm run build`. Relative asset URLs (base
// './') let the same files work under /console/ and /kubernetes/management/console/.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: resolve(here, '..', 'dist', 'console'),
    emptyOutDir: true,
    // Files, never inline data: the Content-Security-Policy allows scripts and styles from 'self' only.
    assetsInlineLimit: 0,
    // Keep the module preload polyfill out: it is not needed by current browsers.
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
