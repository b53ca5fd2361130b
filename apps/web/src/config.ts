/**
 * Where the API is: `?api=<url>`, else VITE_API_URL at build time, else the page's own origin in a
 * production build (the API serves it under /console/, docs/operations.md "The web console") and
 * http://127.0.0.1:3000 in the dev server.
 */
const params = new URLSearchParams(location.search)

export const API_URL =
  params.get('api') ??
  import.meta.env.VITE_API_URL ??
  // MODE, not DEV: DEV follows NODE_ENV, which a build run from a test sets to `test`
  (import.meta.env.MODE === 'development' ? 'http://127.0.0.1:3000' : location.origin)

/** The underlyings the console shows (the API's UNDERLYINGS). */
export const ASSETS = ['ETH', 'BTC'] as const
export type Asset = (typeof ASSETS)[number]
