/**
 * The console's wheel settings (apps/web/src/pages/wheel-card.tsx) in Chromium, from the console's
 * own origin (so the API's CORS answers the PATCH for real): a wheel started from the form shows
 * its settings in percent and days, as the profile sets them; a target delta beyond the profile's
 * bound is said in words and nothing is sent; a figure inside it is saved, only what changed (the
 * wheel row in the database and the wheel's card show it). Screenshots go to
 * test-output/browser/settings-*.png. Built on apps/web/test/support.ts as the console's own
 * Chromium tests are.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { append } from '@wh/ledger'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildAndServe,
  connectAndSignIn,
  launchChromium,
  listenLocal,
  openPage,
  SCREENSHOTS,
  type WebServer,
  walletBrowser,
} from '../../web/test/support'
import { type Api, startApi } from './support'

describe("the console: a running wheel's settings form in Chromium", () => {
  let web: WebServer
  let api: Api
  let apiBase: string
  let browser: Awaited<ReturnType<typeof launchChromium>>

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    web = await buildAndServe()
    api = await startApi({ SIWE_DOMAIN: web.host, WEB_ORIGIN: web.origin })
    apiBase = await listenLocal(api.app)
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await api?.close()
    await web?.close()
  })

  it('opens the form with the settings in effect, refuses a bound, saves a change', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    try {
      const page = await wallet.open(`${web.origin}/?api=${encodeURIComponent(apiBase)}`)
      await connectAndSignIn(page, alice)
      const sql = api.ctx.database.sql
      const [user] = await sql<{ id: string }[]>`select id from users where wallet_address = ${alice.address}`
      await append(sql, {
        type: 'deposit_detected',
        payload: {
          userId: user?.id ?? '',
          chain: 'base',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex: 0,
          currency: 'USDC',
          amount: 1_000_000_000n,
        },
        occurredAt: new Date(),
      })

      await openPage(page, 'Wheel')
      const form = page.getByRole('form', { name: 'Start a wheel' })
      await form.getByLabel('Amount (USDC)').fill('500')
      await form.getByRole('button', { name: 'Start the wheel' }).click()
      await form.getByTestId('start-result').getByText('ETH wheel started').waitFor()
      await page.getByText('Change its settings').click()
      const settings = page.getByRole('form', { name: 'Settings of the ETH wheel' })
      // balanced: 0.20 puts and calls, 40 hours to 8 days, by delta, the next leg after an expiry: in percent and days
      expect(await settings.getByLabel('Put delta (%)').inputValue()).toBe('20')
      expect(await settings.getByLabel('Shortest expiry (days)').inputValue()).toBe('1.67')
      expect(await settings.getByLabel('Longest expiry (days)').inputValue()).toBe('8')
      expect(await settings.getByLabel('After each expiry').inputValue()).toBe('roll')
      await wallet.shot(page, 'settings-01-form')

      // a figure beyond the profile's bound is said in words, in the form's units, and nothing is sent
      await settings.getByLabel('Put delta (%)').fill('45')
      await settings.getByRole('button', { name: 'Save settings' }).click()
      await settings.getByText("The put's delta must be 5 % to 35 %.").waitFor()
      await wallet.shot(page, 'settings-02-out-of-bounds')

      await settings.getByLabel('Put delta (%)').fill('30')
      await settings.getByLabel('After each expiry').selectOption('settle')
      await settings.getByRole('button', { name: 'Save settings' }).click()
      await settings.getByText("Saved: they apply from the ETH wheel's next leg.").waitFor()
      await wallet.shot(page, 'settings-03-saved')

      // only what changed was sent: the rest stays the profile's (NULL)
      const [w] = await sql<{ put: number | null; call: number | null; at: string | null }[]>`
        select put_target_delta_bps as put, call_target_delta_bps as call, at_expiry as at
        from wheels where user_id = ${user?.id ?? ''}`
      expect(w).toEqual({ put: 3000, call: null, at: 'settle' })
      // the wheel shows what was saved
      await page.locator('[data-testid="wheel"]', { hasText: 'delta 30 % put, 20 % call' }).waitFor()
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  })
})
