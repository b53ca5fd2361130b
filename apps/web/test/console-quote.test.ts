/**
 * The console's quote line in Chromium (src/pages/wheel-start.tsx; docs/trading.md "Economics"):
 * once signed in, the start form shows what POST /quotes answers for its asset, amount and settings,
 * read again as the amount changes; a small amount whose fees exceed MAX_FEE_SHARE_BPS shows the warning, a
 * large one does not. The API runs against the Derive simulator; the threshold is set between the
 * fee shares of the two amounts, computed from the simulator before the API starts. Screenshots go
 * to test-output/browser/quote-*.png.
 */
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { simulatorWithThreshold } from '../../api/test/quote-support'
import { type Api, getNonce, newAccount, siweMessage, startApi, verify } from '../../api/test/support'
import { formatAmount } from '../src/format'
import {
  buildAndServe,
  connectAndSignIn,
  launchChromium,
  listenLocal,
  openPage,
  RAW_DECIMAL,
  SCREENSHOTS,
  visibleText,
  type WebServer,
  walletBrowser,
} from './support'

describe('the console shows a quote before a position is opened', () => {
  let sim: Awaited<ReturnType<typeof simulatorWithThreshold>>['sim']
  let web: WebServer
  let api: Api
  let apiBase: string
  let browser: Browser
  let threshold = 0

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    const s = await simulatorWithThreshold(300n, 5000n)
    sim = s.sim
    // the base fee weighs on the small size only
    expect(s.small).toBeGreaterThan(s.large)
    threshold = s.threshold
    web = await buildAndServe()
    api = await startApi({
      SIWE_DOMAIN: web.host,
      WEB_ORIGIN: web.origin,
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      MAX_FEE_SHARE_BPS: String(threshold),
    })
    apiBase = await listenLocal(api.app)
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await api?.close()
    await web?.close()
    await sim?.close()
  })

  /** What POST /quotes answers for this amount (any user's quote is the same). */
  async function apiQuote(amount: string) {
    const account = newAccount()
    const message = siweMessage(account, await getNonce(api.app), { domain: web.host, uri: web.origin })
    const token = (await verify(api.app, message, await account.signMessage({ message }))).json().token
    const res = await api.app.inject({
      method: 'POST',
      url: '/quotes',
      headers: { authorization: `Bearer ${token}` },
      payload: { asset: 'ETH', side: 'put', amount },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  /** The quote line once it shows this quote's instrument and premium (the previous amount's may share the instrument). */
  async function quoteShown(page: Page, state: 'ok' | 'warning', q: { instrument: string; premium: string }) {
    const line = page
      .locator(`[data-testid="quote"][data-state="${state}"]`, { hasText: q.instrument })
      .filter({ hasText: `Premium ${formatAmount(q.premium, 'USDC')}` })
    await line.waitFor()
    return (await line.textContent()) ?? ''
  }

  it('quotes the form, reads it again as the amount changes, and warns when fees take too much', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, account)
    try {
      const page = await wallet.open(`${web.origin}/?api=${encodeURIComponent(apiBase)}`)
      await connectAndSignIn(page, account)
      await openPage(page, 'Wheel')
      const amount = page.getByRole('form', { name: 'Start a wheel' }).getByLabel('Amount (USDC)')

      await amount.fill('5000')
      const large = await apiQuote('5000')
      const okText = await quoteShown(page, 'ok', large)
      expect(okText).toContain(`Premium ${formatAmount(large.premium, 'USDC')}`)
      expect(okText).toContain(`platform fee ${formatAmount(large.platformFee, 'USDC')}`)
      expect(okText).toContain(`= ${formatAmount(large.netPremium, 'USDC')}`)
      expect(okText).not.toContain('⚠')
      await wallet.shot(page, 'quote-01-large')

      await amount.fill('300')
      const small = await apiQuote('300')
      expect(small.feeShareBps).toBeGreaterThan(threshold)
      const warnText = await quoteShown(page, 'warning', small)
      expect(warnText).toContain(`Premium ${formatAmount(small.premium, 'USDC')}`)
      // the warning in words: the share in percent, never a raw code or basis points
      expect(warnText).toContain(`⚠ Fees would take ${small.feeShareBps / 100} % of the premium`)
      expect(warnText).not.toContain('FEES_EXCEED_PREMIUM_SHARE')
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      await wallet.shot(page, 'quote-02-small-warned')
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 120_000)
})
