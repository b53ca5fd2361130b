/**
 * The console's wheel settings form (apps/web/src/wheel-settings.ts) in Chromium, from the
 * console's own origin (so the API's CORS answers the PATCH for real): a wheel started from the
 * form shows a Settings button; the form opens with the profile's settings; a target delta beyond
 * the profile's bound is refused with SETTING_OUT_OF_BOUNDS and changes nothing; a figure inside it
 * is saved (the wheel row in the database and GET /positions show it). Screenshots go to
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

      const form = page.locator('#position-form')
      await form.locator('select[name=side]').selectOption('wheel')
      await form.locator('input[name=amount]').fill('500')
      await form.getByRole('button', { name: 'Open' }).click()
      await page.locator('#message', { hasText: 'ETH wheel started' }).waitFor()
      await page.getByRole('button', { name: 'Settings of the ETH wheel' }).click()
      const settings = page.locator('#wheel-settings-form')
      // balanced: 0.20 puts and calls, 40 hours to 8 days, by delta, the next leg after an expiry
      expect(await settings.locator('input[name=putTargetDeltaBps]').inputValue()).toBe('2000')
      expect(await settings.locator('input[name=maxTenorDays]').inputValue()).toBe('8')
      expect(await settings.locator('select[name=atExpiry]').inputValue()).toBe('roll')
      await wallet.shot(page, 'settings-01-form')

      await settings.locator('input[name=putTargetDeltaBps]').fill('4500')
      await settings.getByRole('button', { name: 'Save settings' }).click()
      await page.locator('#message[data-kind=error]', { hasText: 'SETTING_OUT_OF_BOUNDS' }).waitFor()
      expect(await page.locator('#message').textContent()).toContain('between 500 and 3500')
      await wallet.shot(page, 'settings-02-out-of-bounds')

      await settings.locator('input[name=putTargetDeltaBps]').fill('3000')
      await settings.locator('select[name=atExpiry]').selectOption('settle')
      await settings.getByRole('button', { name: 'Save settings' }).click()
      await page.locator('#message[data-kind=ok]', { hasText: 'apply from its next leg' }).waitFor()
      await settings.waitFor({ state: 'detached' })
      await wallet.shot(page, 'settings-03-saved')

      // only what changed was sent: the rest stays the profile's (NULL)
      const [w] = await sql<{ put: number | null; call: number | null; at: string | null }[]>`
        select put_target_delta_bps as put, call_target_delta_bps as call, at_expiry as at
        from wheels where user_id = ${user?.id ?? ''}`
      expect(w).toEqual({ put: 3000, call: null, at: 'settle' })
      // opened again, the form shows what was saved
      await page.getByRole('button', { name: 'Settings of the ETH wheel' }).click()
      expect(await settings.locator('input[name=putTargetDeltaBps]').inputValue()).toBe('3000')
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  })
})
