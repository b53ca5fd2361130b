/**
 * The built web console served by the API under /console/ (docs/operations.md "The web console"),
 * when CONSOLE_DIR names a build of apps/web (`pnpm --filter @wh/web build` writes apps/web/dist);
 * nothing is mounted when it is unset. Same origin as the API, so the console needs no CORS and
 * calls the API at its own origin.
 *
 * Vite names every file under assets/ by its content hash: those are cached for a year as
 * immutable; index.html (and anything else at the top) is `no-cache`, so a new build is picked up
 * on the next load. The routes are hidden from the OpenAPI document: they are not API operations.
 */
import { existsSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

export const CONSOLE_PREFIX = '/console'
/** Vite's assetsDir: file names there carry a content hash */
const HASHED_DIR = `assets${sep}`
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable'
export const NO_CACHE = 'no-cache'

export interface ConsoleOptions {
  /** the built console (absolute path); undefined: nothing is served */
  dir: string | undefined
}

export async function consolePlugin(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  const { dir } = opts
  if (!dir) return
  if (!existsSync(join(dir, 'index.html')))
    throw new Error(`CONSOLE_DIR (${dir}) holds no index.html: build the console first (pnpm --filter @wh/web build)`)
  await app.register(fastifyStatic, {
    root: dir,
    prefix: CONSOLE_PREFIX,
    // /console answers a redirect to /console/: the built page's relative URLs need the slash
    redirect: true,
    index: ['index.html'],
    dotfiles: 'ignore',
    decorateReply: false,
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply, path) => {
      reply.header('cache-control', relative(dir, path).startsWith(HASHED_DIR) ? IMMUTABLE_CACHE : NO_CACHE)
      reply.header('x-content-type-options', 'nosniff')
    },
  })
}
