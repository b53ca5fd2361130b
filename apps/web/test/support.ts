/** The browser test's pieces: the console built into a temporary folder and served, and Chromium. */
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize, resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import type { PrivateKeyAccount } from 'viem/accounts'
import { build } from 'vite'
import { type Api, startApi } from '../../api/test/support'
import { injectedWallet } from './injected-wallet'

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

/** `vite build` of the console into a new temporary folder (the caller removes it). */
export async function buildConsole(): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'wh-web-'))
  await build({
    configFile: join(WEB_ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  })
  return outDir
}

/** `vite build` into a temporary folder, served by a small static server on a free port. */
export async function buildAndServe(): Promise<WebServer> {
  const outDir = await buildConsole()
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

/** A port free a moment ago (for a server whose configuration must name its own address first). */
export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const { port } = probe.address() as AddressInfo
  await new Promise((r) => probe.close(r))
  return port
}

/** Listens on 127.0.0.1 (`port`, default a free one) and answers the base URL. */
export async function listenLocal(app: FastifyInstance, port = 0): Promise<string> {
  await app.listen({ host: '127.0.0.1', port })
  const addr = app.server.address() as AddressInfo
  return `http://127.0.0.1:${addr.port}`
}

export const STEP_TIMEOUT_MS = 15_000

export interface WalletBrowser {
  context: BrowserContext
  /** uncaught errors of every page opened */
  pageErrors: string[]
  open(url: string): Promise<Page>
  /** full-page screenshot into SCREENSHOTS/<name>.png */
  shot(page: Page, name: string): Promise<void>
}

/** A browser context whose pages have an injected wallet signing as `account` (./injected-wallet). */
export async function walletBrowser(browser: Browser, account: PrivateKeyAccount): Promise<WalletBrowser> {
  const pageErrors: string[] = []
  const context = await browser.newContext({ viewport: { width: 1280, height: 1400 }, acceptDownloads: true })
  await context.exposeFunction('__walletAccount', () => account.address)
  await context.exposeFunction('__walletSign', async (messageHex: `0x${string}`, address: string) => {
    if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error('asked to sign for another account')
    return account.signMessage({ message: { raw: messageHex } })
  })
  await context.addInitScript(injectedWallet)
  return {
    context,
    pageErrors,
    async open(url) {
      const page = await context.newPage()
      page.setDefaultTimeout(STEP_TIMEOUT_MS)
      page.on('pageerror', (e) => pageErrors.push(e.message))
      await page.goto(url)
      return page
    },
    async shot(page, name) {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
    },
  }
}

/** Connect the wallet and sign in (spec 5.1) as a user would: two clicks, then the signed-in state. */
export async function connectAndSignIn(page: Page, account: PrivateKeyAccount): Promise<void> {
  await page.getByRole('button', { name: 'Connect wallet' }).click()
  await page.locator(`[data-testid="wallet-address"][data-address="${account.address}"]`).waitFor()
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.locator('[data-testid="session-status"][data-state="signed-in"]').waitFor({ state: 'attached' })
}

/** Goes to a page of the console by its navigation link, and waits for its heading. */
export async function openPage(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: title, exact: true }).click()
  await page.locator(`main h1`, { hasText: title }).waitFor()
}

/** The widths the console is checked at: two phones and a desktop. */
export const VIEWPORTS = [
  { name: 'phone-360', width: 360, height: 780 },
  { name: 'phone-390', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 900 },
] as const

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/** The page's own globals, named without the DOM lib (apps/api's tests compile this file too). */
type PageGlobals = {
  axe?: { run(ctx: unknown, o: object): Promise<{ violations: unknown[] }> }
  document: { documentElement: { scrollWidth: number } }
  innerWidth: number
}

/** axe-core's serious and critical findings on the page as it is now (none is the bar). */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => (globalThis as unknown as PageGlobals).axe !== undefined)))
    await page.addScriptTag({ path: AXE })
  const result = await page.evaluate(async () => {
    const g = globalThis as unknown as PageGlobals
    return (g.axe as NonNullable<PageGlobals['axe']>).run(g.document, { resultTypes: ['violations'] })
  })
  return (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>)
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`)
}

/** Whether the page is wider than its viewport (a phone would scroll sideways). */
export function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const g = globalThis as unknown as PageGlobals
    return g.document.documentElement.scrollWidth > g.innerWidth + 1
  })
}

/** More than six places after a decimal point: an amount shown as the API's raw string. */
export const RAW_DECIMAL = /\d\.\d{7,}/

/** The text a person sees on the page (hidden sections and tooltips apart). */
export function visibleText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point: textContent includes hidden elements
  return page.locator('body').innerText()
}

/** The console as the API serves it (CONSOLE_DIR), and a Chromium to drive it. */
export interface ServedConsole {
  readonly api: Api
  /** the API's base URL: the page's origin and its SIWE domain */
  readonly base: string
  readonly browser: Browser
  close(): Promise<void>
}

/**
 * A fresh console build served by a real API on a port chosen first (the SIWE domain is the page's
 * host, which is the API's own), and a Chromium; `close` stops all three and removes the build.
 */
export async function servedConsole(): Promise<ServedConsole> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const dir = await buildConsole()
  const port = await freePort()
  const api = await startApi({ CONSOLE_DIR: dir, SIWE_DOMAIN: `127.0.0.1:${port}` })
  const base = await listenLocal(api.app, port)
  const browser = await launchChromium()
  return {
    api,
    base,
    browser,
    close: async () => {
      await browser.close()
      await api.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
