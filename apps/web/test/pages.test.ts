/**
 * Every page of the console in Chromium, as the API serves it under /console/, against a real API
 * (Postgres, Redis, the Derive simulator for quotes): a new user signs in, sees a deposit arrive and
 * get swept, starts a wheel from the form with its settings and a live quote, follows its leg with
 * its countdowns, cycles and decisions, cancels another wheel's leg, withdraws, reads and exports
 * the statement, verifies their proof of liabilities in the browser and reads the market, with no
 * Refresh button: every change arrives over WS /ws/account. Then each page at 360 px, 390 px and a
 * desktop width: nothing wider than the screen, no serious or critical axe-core finding. Screenshots
 * go to test-output/browser/pages-*.png (docs/console.md shows a few).
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { DepositKeyring } from '@wh/wallet'
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { simulatorWithThreshold } from '../../api/test/quote-support'
import { type Api, getNonce, siweMessage, startApi, verify } from '../../api/test/support'
import { candles, deposit, publishRoot, solvencyRun, userOf, wheelWithHistory } from './seed'
import {
  buildConsole,
  connectAndSignIn,
  freePort,
  launchChromium,
  listenLocal,
  openPage,
  overflowsSideways,
  RAW_DECIMAL,
  SCREENSHOTS,
  seriousViolations,
  VIEWPORTS,
  visibleText,
  type WalletBrowser,
  walletBrowser,
} from './support'

const DEST = '0x52908400098527886E0F7030069857D2E4169EE7'
const PAGES = ['Overview', 'Wheel', 'Deposit', 'Withdraw', 'Statement', 'Proof', 'Market'] as const

describe('the console, page by page, at phone and desktop widths', () => {
  let sim: Awaited<ReturnType<typeof simulatorWithThreshold>>['sim']
  let api: Api
  let base: string
  let browser: Browser
  let dir: string

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    ;({ sim } = await simulatorWithThreshold(300n, 5000n))
    dir = await buildConsole()
    const port = await freePort()
    api = await startApi({
      CONSOLE_DIR: dir,
      SIWE_DOMAIN: `127.0.0.1:${port}`,
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
    })
    base = await listenLocal(api.app, port)
    browser = await launchChromium()
    const sql = api.ctx.database.sql
    await candles(sql, 'ETH', 3000, api.clock.now().getTime())
    await candles(sql, 'BTC', 90_000, api.clock.now().getTime())
    await api.seedPrice('ETH', '3010.5')
    await api.seedPrice('BTC', '91000')
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await api?.close()
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** Each page at each width: screenshot, no sideways scroll, no serious or critical axe finding. */
  async function everyWidth(page: Page, shot: WalletBrowser['shot'], prefix: string) {
    const findings: string[] = []
    for (const v of VIEWPORTS) {
      await page.setViewportSize({ width: v.width, height: v.height })
      for (const title of PAGES) {
        await openPage(page, title)
        await page.locator('main .loading').first().waitFor({ state: 'detached' })
        expect(await overflowsSideways(page), `${title} at ${v.width} px`).toBe(false)
        findings.push(...(await seriousViolations(page)).map((f) => `${title} at ${v.name}: ${f}`))
        await shot(page, `${prefix}-${title.toLowerCase()}-${v.name}`)
        // what fits on one screen, for docs/console.md
        await page.screenshot({ path: join(SCREENSHOTS, `${prefix}-${title.toLowerCase()}-${v.name}-screen.png`) })
      }
    }
    expect(findings).toEqual([])
  }

  it('a new user: deposit, wheel, withdrawal, statement, proof and market, live and readable everywhere', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    const sql = api.ctx.database.sql
    try {
      const page = await wallet.open(`${base}/console/`)
      await page.getByText('Sign in to see this').waitFor()
      await page.locator('[data-testid="live-prices"]', { hasText: '3,010.50 USD' }).waitFor()
      await everyWidth(page, wallet.shot, 'pages-signed-out')
      await page.setViewportSize({ width: 1280, height: 900 })
      await openPage(page, 'Overview')
      await connectAndSignIn(page, alice)
      await page.getByText('No money here yet').waitFor()
      const user = await userOf(sql, alice.address)

      await depositArrives(page, wallet, user)
      await wheelStarted(page, wallet, user.id)
      await withdrawal(page, wallet, user.id)
      await statement(page, wallet)
      await proof(page, wallet)
      await market(page, wallet)
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      await everyWidth(page, wallet.shot, 'pages')
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 600_000)

  /** A deposit appears with its progress, the balance follows, and the sweep completes it: all live. */
  async function depositArrives(page: Page, wallet: WalletBrowser, user: { id: string; hdIndex: number }) {
    await openPage(page, 'Deposit')
    const address = DepositKeyring.fromMnemonic(api.ctx.config.keys.masterMnemonic).address(user.hdIndex)
    await page.locator(`[data-testid="deposit-address"][data-address="${address}"]`).waitFor()
    expect(await page.getByTestId('deposit-qr').getAttribute('src')).toMatch(/^data:image\/svg\+xml/)
    await page.getByText('No deposit yet').waitFor()
    await deposit(api.ctx.database.sql, user, address, 'USDC', 1_500_000_000n)
    const item = page.locator('[data-testid="deposits"] li[data-stage="credited"]', { hasText: '1,500.00 USDC' })
    await item.waitFor()
    await page.getByTestId('notices').getByText('Deposit of 1,500.00 USDC credited (base).').waitFor()
    expect(await item.locator('.steps li.done').allTextContents()).toEqual([
      expect.stringMatching(/^Detected/),
      expect.stringMatching(/^Confirmed/),
      expect.stringMatching(/^Credited/),
    ])
    await wallet.shot(page, 'flow-01-deposit-credited')
    await api.ctx.database.sql`update deposits set state = 'swept' where user_id = ${user.id}`
    await page.locator('[data-testid="deposits"] li[data-stage="swept"] .steps li.done', { hasText: 'Swept' }).waitFor()
    await openPage(page, 'Overview')
    await page.getByTestId('free-USDC').getByText('1,500.00 USDC').waitFor()
    await wallet.shot(page, 'flow-02-overview-balance')
  }

  /** The start form quotes with its settings; the wheel's leg, countdowns, cycles and log follow live. */
  async function wheelStarted(page: Page, wallet: WalletBrowser, userId: string) {
    await openPage(page, 'Wheel')
    const form = page.getByRole('form', { name: 'Start a wheel' })
    const quote = form.getByTestId('quote')
    await quote.waitFor()
    const first = (await quote.textContent()) ?? ''
    expect(first).toMatch(/sells ETH-\d{8}-\d+-P/)
    // a lower delta (in percent) sells further from the price: the quote follows the setting
    await form.getByLabel('Put delta (%)').fill('10')
    await page.waitForFunction((before) => {
      const q = document.querySelector('[data-testid="quote"]')
      return q && q.getAttribute('data-state') !== 'loading' && q.textContent !== before
    }, first)
    expect(await quote.textContent()).toMatch(/sells ETH-\d{8}-\d+-P/)
    await form.getByLabel('Put delta (%)').fill('90')
    await form.getByText("The put's delta must be 5 % to 35 %.").waitFor()
    await form.getByLabel('Put delta (%)').fill('20')
    await form.getByLabel('Amount (USDC)').fill('1000')
    await wallet.shot(page, 'flow-03-wheel-form-quote')
    await form.getByRole('button', { name: 'Start the wheel' }).click()
    await form.getByTestId('start-result').getByText('ETH wheel started with 1,000.00 USDC').waitFor()
    const card = page.locator('[data-testid="wheel"][data-state="running"]')
    await card.getByTestId('leg-state').getByText('being funded at the exchange').waitFor()

    const sql = api.ctx.database.sql
    const [w] = await sql<{ id: string; leg: string }[]>`
      select id, current_position_id as leg from wheels where user_id = ${userId}`
    await wheelWithHistory(sql, userId, w?.id as string, w?.leg as string, api.clock.now().getTime())
    await card.getByTestId('leg-state').getByText('being sold: orders rest in the maker window').waitFor()
    await card.getByText('maker window ends in').waitFor()
    await card.getByText('expires in').waitFor()
    await card.getByTestId('cycles').getByText('ETH-20300101-2700-P').waitFor()
    await card
      .getByTestId('decisions')
      .getByText('Waiting: ETH-20300104-2600-P yields 3.12 % a year, below the 5 % floor.')
      .waitFor()
    await wallet.shot(page, 'flow-04-wheel-live-leg')

    // its settings, in percent and days: a bound is said in words, a change is saved
    await card.getByText('Change its settings').click()
    const settings = card.getByRole('form', { name: 'Settings of the ETH wheel' })
    await settings.getByLabel('Put delta (%)').fill('15')
    await settings.getByRole('button', { name: 'Save settings' }).click()
    await settings.getByText("Saved: they apply from the ETH wheel's next leg.").waitFor()

    // another wheel whose leg is cancelled: the wheel stops with it, no 409 left behind
    await form.getByLabel('Asset').selectOption('BTC')
    await form.getByLabel('Amount (USDC)').fill('50')
    await form.getByRole('button', { name: 'Start the wheel' }).click()
    await form.getByTestId('start-result').getByText('BTC wheel started').waitFor()
    await page.getByRole('button', { name: 'Cancel this leg (stops the wheel): the BTC wheel' }).click()
    await page.getByText('Leg cancelled. The wheel is stopped with it.').waitFor()
    await page.getByRole('button', { name: 'Resume: the BTC wheel' }).waitFor()
    await wallet.shot(page, 'flow-05-wheels')
  }

  /** The route stays chosen; a refusal reads as a sentence; the withdrawal is followed to confirmed. */
  async function withdrawal(page: Page, wallet: WalletBrowser, userId: string) {
    await openPage(page, 'Withdraw')
    const form = page.getByRole('form', { name: 'Request a withdrawal' })
    await form.getByLabel('Route').selectOption('base:USDC')
    await form.getByTestId('route-facts').getByText('paid by the platform').waitFor()
    await form.getByLabel('Amount (USDC)').fill('0.5')
    await form.getByLabel('To address').fill(DEST)
    await form.getByRole('button', { name: 'Request withdrawal' }).click()
    await form
      .getByTestId('withdraw-result')
      .getByText(/^The smallest withdrawal is .+ USDC \(.+ USD\)\.$/)
      .waitFor()
    await form.getByLabel('Amount (USDC)').fill('25')
    await form.getByRole('button', { name: 'Request withdrawal' }).click()
    await form.getByTestId('withdraw-result').getByText('Withdrawal of 25.00 USDC').waitFor()
    expect(await form.getByLabel('Route').inputValue()).toBe('base:USDC')
    const item = page.locator('[data-testid="withdrawals"] li', { hasText: '25.00 USDC' })
    await item.locator('.steps li.done', { hasText: 'Requested' }).waitFor()
    // the send records the hash with the mined state in one update: still sent, then confirmed
    const hash = `0x${'ab'.repeat(32)}`
    await api.ctx.database.sql`update withdrawals set state = 'sent', tx_hash = ${hash}, sent_at = now()
      where user_id = ${userId}`
    await item.locator('.steps li.done', { hasText: 'Confirmed' }).waitFor()
    await page
      .getByTestId('notices')
      .getByText(`Withdrawal of 25.00 USDC sent: transaction ${hash.slice(0, 10)}…`)
      .waitFor()
    // the explorer's link where the chain has a public explorer, else the hash itself
    const tx = item.locator('[data-testid="tx-link"], [data-testid="tx-hash"]')
    expect((await tx.getAttribute('href')) ?? (await tx.textContent())).toContain(hash)
    // a reload keeps the route chosen (and the session: the wallet reconnects, no new signature)
    await page.reload()
    await page.locator('main h1', { hasText: 'Withdraw' }).waitFor()
    await page.getByRole('button', { name: 'Connect wallet' }).click()
    await page.locator('[data-testid="session-status"][data-state="signed-in"]').waitFor({ state: 'attached' })
    await page.getByLabel('Route').waitFor()
    expect(await page.getByLabel('Route').inputValue()).toBe('base:USDC')
    await wallet.shot(page, 'flow-06-withdrawal-confirmed')
  }

  /** Accounts read as words; the figures add up; the CSV comes whole. */
  async function statement(page: Page, wallet: WalletBrowser) {
    await openPage(page, 'Statement')
    const table = page.getByTestId('statement')
    await table.getByText('Platform balance').first().waitFor()
    expect(await table.textContent()).not.toMatch(/user:[0-9a-f-]{36}/)
    await page.getByTestId('reconcile').getByRole('rowheader', { name: 'USDC' }).waitFor()
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ])
    await page
      .getByTestId('export-status')
      .getByText(/^Exported \d+ lines from \d+ pages? to statement-/)
      .waitFor()
    const csv = readFileSync(await download.path(), 'utf8')
    expect(csv.split('\n')[0]).toBe('event_id,type,occurred_at,account,currency,amount,balance_after,account_label')
    await wallet.shot(page, 'flow-07-statement')
  }

  /** The proof is fetched and checked in the browser against the public root; the solvency figures beside it. */
  async function proof(page: Page, wallet: WalletBrowser) {
    const sql = api.ctx.database.sql
    // two more users in the tree, so a proof has a path to recompute
    for (const amount of [7_000_000n, 9_000_000n]) {
      const other = privateKeyToAccount(generatePrivateKey())
      expect(await signInAs(other)).toBeTruthy()
      await deposit(sql, await userOf(sql, other.address), DEST, 'USDC', amount)
    }
    await publishRoot(sql)
    await solvencyRun(sql, 1_000_000_000n)
    await openPage(page, 'Proof')
    await page.getByTestId('liability-root').waitFor()
    await page.getByTestId('solvency').getByRole('rowheader', { name: 'USDC' }).waitFor()
    await page.getByRole('button', { name: 'Check my inclusion' }).click()
    const verified = /^✓ Verified in your browser: .* \(2 steps up to it recomputed/
    await page.getByTestId('proof-result').getByText(verified).waitFor()
    await wallet.shot(page, 'flow-08-proof-verified')

    // someone who signed up after the root: told when the next one comes
    const late = privateKeyToAccount(generatePrivateKey())
    const other = await walletBrowser(browser, late)
    try {
      const p = await other.open(`${base}/console/#/proof`)
      await connectAndSignIn(p, late)
      await p.getByRole('button', { name: 'Check my inclusion' }).click()
      const next = /^You are not in a tree yet: .* The next root is published at \d{4}-\d{2}-\d{2} \d{2}:00/
      await p.getByTestId('proof-result').getByText(next).waitFor()
      await other.shot(p, 'flow-08b-proof-not-in-a-tree-yet')
    } finally {
      await other.context.close()
    }
  }

  /** A user signed in through the API directly (the tree needs their rows, not their browser). */
  async function signInAs(account: ReturnType<typeof privateKeyToAccount>): Promise<string> {
    const message = siweMessage(account, await getNonce(api.app), { domain: new URL(base).host, uri: base })
    return (await verify(api.app, message, await account.signMessage({ message }))).json().token
  }

  async function market(page: Page, wallet: WalletBrowser) {
    await openPage(page, 'Market')
    await page.getByTestId('market-index').getByText('3,010.50 USD').waitFor()
    await page.locator('[data-testid="market-chart"][data-drawn="true"]').waitFor()
    await page.getByTestId('strategies').waitFor()
    await page.getByRole('button', { name: 'BTC' }).click()
    await page.getByTestId('market-index').getByText('91,000.00 USD').waitFor()
    await wallet.shot(page, 'flow-09-market')
  }
})
