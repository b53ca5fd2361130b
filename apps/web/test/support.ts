/** The browser test's pieces: the console built into a temporary folder and served, and Chromium. */
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize, resolve } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { build } from 'vite'

export const WEB_ROOT = resolve(import.meta.dirname, '..')
/** Where screenshots go (git-ignored; CI keeps the folder as an artifact). */
export const SCREENSHOTS = resolve(WEB_ROOT, '../../test-output/browser')
/** Debian's Chromium, installed by scripts/bootstrap.sh: playwright-core downloads no browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
}

export interface WebServer {
  origin: string
  host: string
  close(): Promise<void>
}

/** `vite build` into a temporary folder, served by a small static server on a free port. */
export async function buildAndServe(): Promise<WebServer> {
  const outDir = mkdtempSync(join(tmpdir(), 'wh-web-'))
  await build({
    configFile: join(WEB_ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  })
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const file = normalize(join(outDir, path === '/' ? 'index.html' : path))
    if (!file.startsWith(outDir) || !existsSync(file)) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
    createReadStream(file).pipe(res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
      rmSync(outDir, { recursive: true, force: true })
    },
  }
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: run scripts/bootstrap.sh (apt-get install chromium)`)
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: [
      '--no-sandbox', // CI runs as root
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-default-apps',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--no-first-run',
    ],
  })
}
