import { defineConfig } from 'vite'

// The console is static files: `vite` serves them in the local run (scripts/dev.ts), `vite build`
// writes dist/ (the browser test builds into a temporary folder and serves that).
// VITE_API_URL is where the API answers (default: the page's own origin in a build, as when the
// API serves it under /console/; http://127.0.0.1:3000 in the dev server); `?api=` overrides it.
export default defineConfig({
  root: import.meta.dirname,
  // relative URLs in the built index.html: the same build works at / and under /console/
  base: './',
  server: { host: 'localhost', port: 5173, strictPort: true },
  preview: { host: 'localhost', port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // the whole console is one ~37 kB chunk (~15 kB gzipped): @wh/client signs in with viem's SIWE
    // helper, not siwe + ethers (~670 kB). A console for a handful of users needs no splitting; the
    // limit (kB) warns well before a dependency of that weight comes back.
    chunkSizeWarningLimit: 100,
  },
})
