/**
 * The signed-in console in Chromium, from its own origin (cross-origin to the API, which checks
 * CORS for real): balances read as people read them (never an 18-place string), a put opened from
 * the form and cancelled with its Cancel button (a cross-origin DELETE), the statement paged to its
 * end with "Show more", and the CSV export following x-next-cursor across pages. A screenshot of
 * each screen goes to test-output/browser/portfolio-*.png.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { appendBatch, type EventInput } from '@wh/ledger'
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, startApi } from '../../api/test/support'
import {
  buildAndServe,
  connectAndSignIn,
  launchChromium,
  listenLocal,
  RAW_DECIMAL,
  SCREENSHOTS,
  visibleText,
  type WalletBrowser,
  type WebServer,
  walletBrowser,
} from './support'

const HOUR = 3_600_000
const txHash = () => `0x${randomBytes(32).toString('hex')}`

/**
 * 27 deposits, an hour apart: 1,234.567891 USDC, then 24 of 1.000001 USDC, then 1.5 ETH and
 * 0.123456789 ETH. Free balances 1,258.567915 USDC and 1.623456789 ETH: shown rounded down as
 * 1,258.56 USDC and 1.623456 ETH. At 10 events a page the statement has 3 pages.
 */
function deposits(userId: string, now: number): EventInput[] {
  const usdc = (units: bigint, i: number): EventInput => ({
    type: 'deposit_detected',
    payload: { userId, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount: units },
    occurredAt: new Date(now - (30 - i) * HOUR),
  })
  const eth = (wei: bigint, i: number): EventInput => ({
    type: 'deposit_detected',
    payload: { userId, chain: 'ethereum', txHash: txHash(), logIndex: 0, currency: 'ETH', amount: wei },
    occurredAt: new Date(now - (30 - i) * HOUR),
  })
  return [
    usdc(1_234_567_891n, 0),
    ...Array.from({ length: 24 }, (_, i) => usdc(1_000_001n, i + 1)),
    eth(1_500_000_000_000_000_000n, 25),
    eth(123_456_789_000_000_000n, 26),
  ]
}
const EVENTS = 27

describe('the signed-in console in Chromium: balances, positions, statement', () => {
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

  const cellsOf = (page: Page, table: string) =>
    page
      .locator(`#${table} tbody tr`)
      .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent ?? '')))

  it('shows readable balances, cancels a put, pages the statement and exports it whole', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    try {
      const page = await wallet.open(`${web.origin}/?api=${encodeURIComponent(apiBase)}`)
      await connectAndSignIn(page, alice)
      await page.locator('#summary', { hasText: 'no balances yet' }).waitFor()
      await page.locator('#statement', { hasText: 'no events yet' }).waitFor()
      await wallet.shot(page, 'portfolio-01-signed-in')

      // money arrives while the page is open; "Refresh" shows it
      const sql = api.ctx.database.sql
      const [user] = await sql<{ id: string }[]>`select id from users where wallet_address = ${alice.address}`
      await appendBatch(sql, deposits(user!.id, Date.now()))
      await page.getByRole('button', { name: 'Refresh' }).click()
      await page.locator('#summary', { hasText: '1,258.56 USDC' }).waitFor()
      const balances = await cellsOf(page, 'summary')
      expect(balances.map((r) => [r[0], r[1]])).toEqual([
        ['ETH', '1.623456 ETH'],
        ['USDC', '1,258.56 USDC'],
      ])
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      // the exact figure is one hover away
      expect(
        await page.locator('#summary tbody tr').first().locator('td').nth(1).locator('span').getAttribute('title'),
      ).toBe('1.623456789000000000 ETH')
      await wallet.shot(page, 'portfolio-02-balances')

      await pageTheStatement(page)
      expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
      await wallet.shot(page, 'portfolio-03-statement-paged')

      await exportTheStatement(page)
      await wallet.shot(page, 'portfolio-04-statement-exported')

      await openAndCancelAPut(page, wallet.shot)
      await wallet.shot(page, 'portfolio-06-position-cancelled')

      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 120_000)

  /** 10 a page: "Show more" twice reaches the end; every event's postings are listed, oldest first. */
  async function pageTheStatement(page: Page) {
    await page.getByLabel('Rows per page').selectOption('10')
    const status = page.locator('#statement-status')
    const more = page.getByRole('button', { name: 'Show more' })
    await status.getByText('10 events shown; there are more.').waitFor()
    await more.click()
    await status.getByText('20 events shown; there are more.').waitFor()
    await more.click()
    await status.getByText(`${EVENTS} events: the whole statement.`).waitFor()
    expect(await more.isHidden()).toBe(true)
    const rows = await cellsOf(page, 'statement')
    // each deposit posts to the free balance and to its mirror outside the platform
    expect(rows).toHaveLength(EVENTS * 2)
    expect(rows.filter((r) => r[2] === 'free balance').map((r) => r[3])).toEqual([
      '1,234.56 USDC',
      ...Array.from({ length: 24 }, () => '1.00 USDC'),
      '1.5 ETH',
      '0.123456 ETH',
    ])
    const last = rows.filter((r) => r[2] === 'free balance').at(-1)
    expect(last?.[1]).toBe('deposit detected')
    expect(last?.[4]).toBe('1.623456 ETH') // the balance after, rounded down
    expect(last?.[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \((\d+ hours? ago|\d+ minutes? ago)\)$/)
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
    await page.locator('#statement-export-status', { hasText: 'from 3 pages' }).waitFor()
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
    expect(await page.locator('#statement-export-status').textContent()).toBe(
      `Exported ${EVENTS * 2} lines from 3 pages to ${download.suggestedFilename()}.`,
    )
    // three requests of 10 events: the first without a cursor, each next with the one the last handed out
    expect(asked.map((u) => u.searchParams.get('limit'))).toEqual(['10', '10', '10'])
    expect(asked[0]?.searchParams.has('cursor')).toBe(false)
    expect(asked.slice(1).every((u) => (u.searchParams.get('cursor') ?? '').length > 0)).toBe(true)
  }

  /** Opened from the form, it reserves 100 USDC; its Cancel button (a cross-origin DELETE) gives them back. */
  async function openAndCancelAPut(page: Page, shot: WalletBrowser['shot']) {
    const form = page.getByRole('form', { name: 'Open a position' })
    await form.getByLabel('Strategy').selectOption('put')
    await form.getByLabel('on').selectOption('ETH')
    await form.getByLabel('with').fill('100')
    await form.getByRole('button', { name: 'Open' }).click()
    await page.locator('#message', { hasText: 'Put on ETH accepted: 100.00 USDC committed' }).waitFor()
    const cancel = page.getByRole('button', { name: 'Cancel the put on ETH, 100.00 USDC' })
    await cancel.waitFor()
    await page.locator('#summary', { hasText: '1,158.56 USDC' }).waitFor()
    const [open] = await cellsOf(page, 'position-list')
    expect(open?.slice(1, 6)).toEqual(['ETH', 'put', '100.00 USDC', 'funding', 'single'])
    expect(await visibleText(page)).not.toMatch(RAW_DECIMAL)
    await shot(page, 'portfolio-05-position-open')

    await cancel.click()
    await page.locator('#message', { hasText: 'Cancelled the put on ETH, 100.00 USDC.' }).waitFor()
    await page.locator('#position-list tbody tr', { hasText: 'cancelled' }).waitFor()
    await page.locator('#summary', { hasText: '1,258.56 USDC' }).waitFor()
    expect(await page.getByRole('button', { name: /^Cancel the / }).count()).toBe(0)
    const [cancelled] = await cellsOf(page, 'position-list')
    expect(cancelled?.[4]).toBe('cancelled (cancelled by the user)')
  }
})
