/**
 * The signed-in console in Chromium, from its own origin (cross-origin to the API, which checks
 * CORS for real): deposits arriving while the page is open show at once (no Refresh button) with
 * balances read as people read them (never an 18-place string), the statement paged to its end with
 * "Show more", the CSV export following x-next-cursor across pages, and a wheel started from the
 * form whose leg is cancelled with its button (a cross-origin DELETE): the wheel stops with it and
 * the money is free again. A screenshot of each screen goes to test-output/browser/portfolio-*.png.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { recordDetected } from '@wh/deposits'
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, startApi } from '../../api/test/support'
import { txHash, userOf } from './seed'
import {
  buildAndServe,
  connectAndSignIn,
  launchChromium,
  listenLocal,
  openPage,
  RAW_DECIMAL,
  SCREENSHOTS,
  visibleText,
  type WalletBrowser,
  type WebServer,
  walletBrowser,
} from './support'

const ADDRESS = '0xde709f2102306220921060314715629080e2fb77'

/**
 * 27 deposits: 1,234.567891 USDC, 24 of 1.000001 USDC, 1.5 ETH and 0.123456789 ETH. Free balances
 * 1,258.567915 USDC and 1.623456789 ETH: shown rounded down as 1,258.56 USDC and 1.623456 ETH. At
 * 10 events a page the statement has 3 pages.
 */
function deposits(user: { id: string; hdIndex: number }) {
  const row = (token: 'USDC' | 'ETH', amount: bigint, i: number) => ({
    chain: 'base' as const,
    tx_hash: txHash(),
    log_index: i,
    block_number: String(100 + i),
    user_id: user.id,
    hd_index: user.hdIndex,
    address: ADDRESS,
    token,
    amount: amount.toString(),
  })
  return [
    row('USDC', 1_234_567_891n, 0),
    ...Array.from({ length: 24 }, (_, i) => row('USDC', 1_000_001n, i + 1)),
    row('ETH', 1_500_000_000_000_000_000n, 25),
    row('ETH', 123_456_789_000_000_000n, 26),
  ]
}
const EVENTS = 27

describe('the signed-in console in Chromium: balances, statement, a wheel cancelled', () => {
  let web: WebServer
  let api: Api
  let apiBase: string
  let browser: Browser

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

  const cellsOf = (page: Page) =>
    page
      .locator('[data-testid="statement"] tbody tr')
      .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent ?? '')))

  it('shows readable balances as money arrives, pages the statement, exports it whole, stops a wheel with its leg', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    try {
      const page = await wallet.open(`${web.origin}/?api=${encodeURIComponent(apiBase)}`)
      await connectAndSignIn(page, alice)
      await page.getByText('No money here yet').waitFor()
      await wallet.shot(page, 'portfolio-01-signed-in')

      // money arrives while the page is open: the account stream says so, the page follows
      const user = await userOf(api.ctx.database.sql, alice.address)
      await api.ctx.database.sql.begin((tx) => recordDetected(tx, deposits(user)))
      await page.getByTestId('free-USDC').getByText('1,258.56 USDC').waitFor()
      expect(await page.getByTestId('free-ETH').locator('.value').textContent()).toBe('1.623456 ETH')
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      // the exact figure is one hover away
      expect(await page.getByTestId('free-ETH').locator('.amount').getAttribute('title')).toBe(
        '1.623456789000000000 ETH',
      )
      await wallet.shot(page, 'portfolio-02-balances')

      await openPage(page, 'Statement')
      await pageTheStatement(page)
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      await wallet.shot(page, 'portfolio-03-statement-paged')
      await exportTheStatement(page)
      await wallet.shot(page, 'portfolio-04-statement-exported')

      await startAndCancel(page, wallet.shot)
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 180_000)

  /** 10 a page: "Show more" twice reaches the end; every event's postings are listed, oldest first. */
  async function pageTheStatement(page: Page) {
    await page.getByLabel('Rows per page').selectOption('10')
    const status = page.getByTestId('statement-status')
    const more = page.getByRole('button', { name: 'Show more' })
    await status.getByText('10 events shown; there are more.').waitFor()
    await more.click()
    await status.getByText('20 events shown; there are more.').waitFor()
    await more.click()
    await status.getByText(`${EVENTS} events: the whole statement.`).waitFor()
    expect(await more.count()).toBe(0)
    const rows = await cellsOf(page)
    // each deposit posts to the platform balance and to its mirror outside the platform
    expect(rows).toHaveLength(EVENTS * 2)
    const platform = rows.filter((r) => r[2] === 'Platform balance')
    // the deposits were recorded in one transaction, at one instant: their order among themselves is the ids'
    expect(platform.map((r) => r[3]).sort()).toEqual(
      ['+1,234.56 USDC', ...Array.from({ length: 24 }, () => '+1.00 USDC'), '+1.5 ETH', '+0.123456 ETH'].sort(),
    )
    expect(platform.every((r) => r[1] === 'deposit detected')).toBe(true)
    // the balance after, rounded down: the last of each currency holds it all
    expect(platform.filter((r) => r[3]?.endsWith('ETH')).map((r) => r[4])).toContain('1.623456 ETH')
    expect(platform.filter((r) => r[3]?.endsWith('USDC')).map((r) => r[4])).toContain('1,258.56 USDC')
    expect(rows.filter((r) => r[2] === 'Outside the platform')).toHaveLength(EVENTS)
    expect(platform[0]?.[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \((just now|\d+ minutes? ago)\)$/)
  }

  /** The export asks page after page with each x-next-cursor and saves the statement whole. */
  async function exportTheStatement(page: Page) {
    const asked: URL[] = []
    const onRequest = (r: { url(): string }) => {
      const u = new URL(r.url())
      if (u.pathname === '/portfolio/statement' && u.searchParams.get('format') === 'csv') asked.push(u)
    }
    page.on('request', onRequest)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ])
    await page.getByTestId('export-status').getByText('from 3 pages').waitFor()
    page.off('request', onRequest)
    expect(download.suggestedFilename()).toMatch(/^statement-\d{4}-\d{2}-\d{2}\.csv$/)
    const csv = readFileSync(await download.path(), 'utf8')

    // the same statement the API gives in one page, byte for byte: nothing lost or doubled at the seams
    const token = JSON.parse((await page.evaluate(() => sessionStorage.getItem('wheelhouse.session'))) ?? '{}').token
    const whole = await fetch(`${apiBase}/portfolio/statement?format=csv&limit=500`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(whole.headers.get('x-next-cursor')).toBeNull()
    expect(csv).toBe(await whole.text())
    const lines = csv.trimEnd().split('\n')
    expect(lines.filter((l) => l.startsWith('event_id,'))).toHaveLength(1)
    expect(lines).toHaveLength(1 + EVENTS * 2)
    expect(await page.getByTestId('export-status').textContent()).toBe(
      `Exported ${EVENTS * 2} lines from 3 pages to ${download.suggestedFilename()}.`,
    )
    // three requests of 10 events: the first without a cursor, each next with the one the last handed out
    expect(asked.map((u) => u.searchParams.get('limit'))).toEqual(['10', '10', '10'])
    expect(asked[0]?.searchParams.has('cursor')).toBe(false)
    expect(asked.slice(1).every((u) => (u.searchParams.get('cursor') ?? '').length > 0)).toBe(true)
  }

  /** Started from the form, a wheel reserves 100 USDC; its leg's Cancel (a cross-origin DELETE) stops it and frees them. */
  async function startAndCancel(page: Page, shot: WalletBrowser['shot']) {
    await openPage(page, 'Wheel')
    const form = page.getByRole('form', { name: 'Start a wheel' })
    await form.getByLabel('Amount (USDC)').fill('100')
    await form.getByRole('button', { name: 'Start the wheel' }).click()
    await form.getByTestId('start-result').getByText('ETH wheel started with 100.00 USDC').waitFor()
    await openPage(page, 'Overview')
    await page.getByTestId('free-USDC').getByText('1,158.56 USDC').waitFor()
    await openPage(page, 'Wheel')
    await page.getByRole('button', { name: 'Cancel this leg (stops the wheel): the ETH wheel' }).click()
    await page.getByText('Leg cancelled. The wheel is stopped with it.').waitFor()
    await page.locator('[data-testid="wheel"][data-state="stopped"]').waitFor()
    await shot(page, 'portfolio-05-wheel-stopped-with-its-leg')
    await openPage(page, 'Overview')
    await page.getByTestId('free-USDC').getByText('1,258.56 USDC').waitFor()
  }
})
