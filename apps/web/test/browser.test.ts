/**
 * The console in a real browser (headless Chromium through playwright-core) against a real API on
 * the integration suite's Postgres and Redis: an injected EIP-1193 wallet backed by a test key
 * signs in (spec 5.1); the deposit address shown is the one derived for the user (spec 2.1);
 * switching the wallet's account hides the token (spec 5.3); a second tab signs in on its own
 * (sessionStorage is per tab). A screenshot of each step goes to test-output/browser/.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { DepositKeyring } from '@wh/wallet'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, startApi } from '../../api/test/support'
import { injectedWallet } from './injected-wallet'
import { buildAndServe, launchChromium, openPage, SCREENSHOTS, type WebServer } from './support'

const STEP_TIMEOUT_MS = 15_000

describe('the web console in Chromium', () => {
  let web: WebServer
  let api: Api
  let apiBase: string
  let browser: Browser

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    web = await buildAndServe()
    // the SIWE domain is the console's host, and the API lets the console's origin call it (CORS)
    api = await startApi({ SIWE_DOMAIN: web.host, WEB_ORIGIN: web.origin })
    await api.app.listen({ host: '127.0.0.1', port: 0 })
    const addr = api.app.server.address()
    apiBase = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await api?.close()
    await web?.close()
  })

  it('signs in with an injected wallet, shows the derived deposit address, and keeps tokens per address and tab', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const bob = privateKeyToAccount(generatePrivateKey())
    let current: PrivateKeyAccount = alice
    let signatures = 0
    const pageErrors: string[] = []

    const context: BrowserContext = await browser.newContext({ viewport: { width: 1200, height: 1400 } })
    await context.exposeFunction('__walletAccount', () => current.address)
    await context.exposeFunction('__walletSign', async (messageHex: `0x${string}`, address: string) => {
      if (address.toLowerCase() !== current.address.toLowerCase()) throw new Error('asked to sign for another account')
      signatures++
      return current.signMessage({ message: { raw: messageHex } })
    })
    await context.addInitScript(injectedWallet)
    const url = `${web.origin}/?api=${encodeURIComponent(apiBase)}`
    const open = async (): Promise<Page> => {
      const page = await context.newPage()
      page.setDefaultTimeout(STEP_TIMEOUT_MS)
      page.on('pageerror', (e) => pageErrors.push(e.message))
      await page.goto(url)
      return page
    }
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
    const sessionState = (page: Page) => page.getByTestId('session-status').getAttribute('data-state')
    const signedIn = '[data-testid="session-status"][data-state="signed-in"]'

    try {
      // 1. the page loads: public data, no wallet connected, not signed in
      const tab1 = await open()
      await expect.poll(() => tab1.getByTestId('wallet-address').textContent()).toBe('No wallet connected')
      await tab1.getByText('Sign in to see this').waitFor()
      await shot(tab1, '01-loaded')

      // 2. connect the wallet, then sign in (spec 5.1: nonce, SIWE message, personal_sign, verify)
      await tab1.getByRole('button', { name: 'Connect wallet' }).click()
      await tab1.locator(`[data-testid="wallet-address"][data-address="${alice.address}"]`).waitFor()
      await shot(tab1, '02-connected')
      await tab1.getByRole('button', { name: 'Sign in' }).click()
      await tab1.locator(signedIn).waitFor({ state: 'attached' })
      await openPage(tab1, 'Deposit')
      await tab1.locator('[data-testid="deposit-address"][data-address]').waitFor()
      expect(signatures).toBe(1)

      // 3. the deposit address shown is the one derived for this user: m/44'/60'/0'/0/{hd_index}
      const [user] = await api.ctx.database.sql<{ hd_index: number }[]>`
        select hd_index from users where wallet_address = ${alice.address}`
      expect(user).toBeDefined()
      const derived = DepositKeyring.fromMnemonic(api.ctx.config.keys.masterMnemonic).address(user!.hd_index)
      expect(await tab1.getByTestId('deposit-address').textContent()).toBe(derived)
      expect(await tab1.getByTestId('deposit-qr').getAttribute('src')).toMatch(/^data:image\/svg\+xml/)
      await shot(tab1, '03-signed-in')

      // 4. the wallet switches to another account: the token of the first is not offered (spec 5.3)
      current = bob
      await tab1.evaluate(
        (a) =>
          (window as unknown as { ethereum: { emit(e: string, v: unknown): void } }).ethereum.emit('accountsChanged', [
            a,
          ]),
        bob.address,
      )
      await tab1
        .locator('[data-testid="session-status"][data-state="none"]', { hasText: bob.address })
        .waitFor({ state: 'attached' })
      expect(await tab1.getByTestId('deposit-address').count()).toBe(0)
      await tab1.getByText('Sign in to see this').waitFor()
      // still stored, bound to the first address: hidden, not handed to the other one
      const stored = await tab1.evaluate(() => sessionStorage.getItem('wheelhouse.session'))
      expect(JSON.parse(stored ?? '{}').address).toBe(alice.address)
      await shot(tab1, '04-switched-account')

      // switching back offers it again, without a new signature
      current = alice
      await tab1.evaluate(
        (a) =>
          (window as unknown as { ethereum: { emit(e: string, v: unknown): void } }).ethereum.emit('accountsChanged', [
            a,
          ]),
        alice.address,
      )
      await tab1.locator(signedIn).waitFor({ state: 'attached' })
      expect(signatures).toBe(1)

      // 5. a second tab has its own sessionStorage: it must sign in itself
      const tab2 = await open()
      await tab2.getByRole('button', { name: 'Connect wallet' }).click()
      await tab2.locator(`[data-testid="wallet-address"][data-address="${alice.address}"]`).waitFor()
      expect(await sessionState(tab2)).toBe('none')
      await tab2.getByText('Sign in to see this').waitFor()
      await shot(tab2, '05-second-tab')
      await tab2.getByRole('button', { name: 'Sign in' }).click()
      await tab2.locator(signedIn).waitFor({ state: 'attached' })
      await openPage(tab2, 'Deposit')
      await tab2.locator('[data-testid="deposit-address"][data-address]').waitFor()
      expect(await tab2.getByTestId('deposit-address').textContent()).toBe(derived)
      expect(signatures).toBe(2)
      const token2 = JSON.parse((await tab2.evaluate(() => sessionStorage.getItem('wheelhouse.session'))) ?? '{}').token
      expect(token2).not.toBe(JSON.parse(stored ?? '{}').token)
      await shot(tab2, '06-second-tab-signed-in')
      expect(await sessionState(tab1)).toBe('signed-in')

      expect(pageErrors).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)
})
