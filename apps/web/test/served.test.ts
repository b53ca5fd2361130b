import { DepositKeyring } from '@wh/wallet'
import type { Browser } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Api } from '../../api/test/support'
import {
  connectAndSignIn,
  openPage,
  RAW_DECIMAL,
  type ServedConsole,
  servedConsole,
  visibleText,
  walletBrowser,
} from './support'

describe('the console as the API serves it (CONSOLE_DIR)', () => {
  let served: ServedConsole
  let api: Api
  let base: string
  let browser: Browser

  beforeAll(async () => {
    served = await servedConsole()
    ;({ api, base, browser } = served)
  }, 120_000)

  afterAll(async () => {
    await served?.close()
  })

  it('answers /console/ with the built index.html and its hashed assets with long-lived cache headers', async () => {
    const index = await fetch(`${base}/console/`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toMatch(/^text\/html/)
    expect(index.headers.get('cache-control')).toBe('no-cache')
    const html = await index.text()
    expect(html).toContain('<title>Wheelhouse console</title>')
    const script = /<script type="module" crossorigin src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    const style = /<link rel="stylesheet" crossorigin href="\.\/(assets\/[^"]+\.css)"/.exec(html)?.[1]
    expect(script).toMatch(/^assets\/index-[\w-]+\.js$/)
    for (const [asset, type] of [
      [script, /javascript/],
      [style, /^text\/css/],
    ] as const) {
      const res = await fetch(`${base}/console/${asset}`)
      expect(res.status, asset).toBe(200)
      expect(res.headers.get('content-type')).toMatch(type)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(res.headers.get('etag')).toBeTruthy()
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100)
    }
    const bare = await fetch(`${base}/console`, { redirect: 'manual' })
    expect(bare.status).toBe(301)
    expect(bare.headers.get('location')).toBe('/console/')
    const missing = await fetch(`${base}/console/assets/nope.js`)
    expect(missing.status).toBe(404)
  })

  it('loads from /console/ and signs in against its own origin', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    const origins = new Set<string>()
    const sockets: string[] = []
    wallet.context.on('request', (r) => {
      const u = new URL(r.url())
      if (u.protocol.startsWith('http')) origins.add(u.host)
    })
    wallet.context.on('page', (p) => p.on('websocket', (ws) => sockets.push(ws.url())))
    try {
      const page = await wallet.open(`${base}/console`) // redirected to /console/
      expect(new URL(page.url()).pathname).toBe('/console/')
      await page.getByText('Sign in to see this').waitFor()
      await wallet.shot(page, 'served-01-loaded')

      await connectAndSignIn(page, alice)
      const [user] = await api.ctx.database.sql<{ hd_index: number }[]>`
        select hd_index from users where wallet_address = ${alice.address}`
      const derived = DepositKeyring.fromMnemonic(api.ctx.config.keys.masterMnemonic).address(user!.hd_index)
      await page.getByText('No money here yet').waitFor()
      await openPage(page, 'Deposit')
      expect(await page.getByTestId('deposit-address').textContent()).toBe(derived)
      await openPage(page, 'Withdraw')
      await page.getByLabel('Route').waitFor()
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      await wallet.shot(page, 'served-02-signed-in')

      // everything came from the API's origin: the page, its assets, the calls and the sockets
      expect([...origins]).toEqual([new URL(base).host])
      expect(sockets.length).toBeGreaterThan(0)
      for (const ws of sockets) expect(new URL(ws).host).toBe(new URL(base).host)
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 60_000)
})
