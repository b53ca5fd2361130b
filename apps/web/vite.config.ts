import { defineConfig } from 'vite'

// The console is static files: `vite` serves them in the local run (scripts/dev.ts), `vite build`
// writes dist/ (the browser tests build into a temporary folder and serve that).
// VITE_API_URL is where the API answers (default: the page's own origin in a build, as when the
// API serves it under /console/; http://127.0.0.1:3000 in the dev server); `?api=` overrides it.
export default defineConfig({
  root: import.meta.dirname,
  // relative URLs in the built index.html: the same build works at / and under /console/
  base: './',
  // Preact's JSX without a plugin: Vite's own transform with Preact's automatic runtime
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  server: { host: 'localhost', port: 5173, strictPort: true },
  preview: { host: 'localhost', port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // the first load stays under 150 kB gzipped (docs/console.md "Size"; test/first-load.test.ts measures it):
    // the charts (uPlot) load on first use, in a chunk of their own
    chunkSizeWarningLimit: 200,
  },
})
