import { append } from '@wh/ledger'
import type { Browser } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Api } from '../../api/test/support'
import { connectAndSignIn, type ServedConsole, servedConsole, walletBrowser } from './support'

describe('the console lists each wheel’s decisions', () => {
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

  it('shows a wheel’s latest decisions, newest first, under the wheels', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    try {
      const page = await wallet.open(`${base}/console/`)
      await connectAndSignIn(page, alice)
      await page.locator('#wheel-list', { hasText: 'no wheels' }).waitFor()

      // money arrives while the page is open
      const sql = api.ctx.database.sql
      const [user] = await sql<{ id: string }[]>`select id from users where wallet_address = ${alice.address}`
      const userId = user?.id as string
      await append(sql, {
        type: 'deposit_detected',
        payload: {
          userId,
          chain: 'base',
          txHash: `0x${'ab'.repeat(32)}`,
          logIndex: 0,
          currency: 'USDC',
          amount: 1_000_000_000n,
        },
        occurredAt: new Date(),
      })
      // the wheel started from the form, then two of its decisions (as the worker's ticks write them)
      await page.getByRole('button', { name: 'Refresh' }).click()
      const form = page.getByRole('form', { name: 'Open a position' })
      await form.getByLabel('Strategy').selectOption('wheel')
      await form.getByLabel('on').selectOption('ETH')
      await form.getByLabel('with').fill('500')
      await form.getByRole('button', { name: 'Open' }).click()
      await page.locator('#message', { hasText: 'ETH wheel started' }).waitFor()
      await page.locator('#wheel-decisions', { hasText: 'no decisions yet' }).waitFor()
      const [wheel] = await sql<{ id: string; leg: string }[]>`
        select id, current_position_id as leg from wheels where user_id = ${userId}`
      const wheelId = wheel?.id as string
      const at = Date.now()
      await sql`insert into wheel_decisions (wheel_id, user_id, position_id, kind, reason, facts, created_at) values
        (${wheelId}, ${userId}, ${wheel?.leg ?? null}, 'waiting', 'yield_below_floor',
          ${sql.json({ yield: { instrument: 'ETH-20261125-2700-P', annualisedYieldBps: 312, floorBps: 500 } })}, ${new Date(at)}),
        (${wheelId}, ${userId}, ${wheel?.leg ?? null}, 'skipped', 'deadline_passed', '{}', ${new Date(at + 1000)})`

      await page.getByRole('button', { name: 'Refresh' }).click()
      const list = page.locator(`#wheel-decisions details[data-wheel="${wheelId}"] ol li`)
      await list.nth(1).waitFor()
      expect(await list.allTextContents()).toEqual([
        expect.stringContaining('Skipped: past the 20:00 UTC deadline; the next leg waits for tomorrow.'),
        expect.stringContaining('Waiting: ETH-20261125-2700-P yields 3.12 % a year, below the 5 % floor.'),
      ])
      expect(await list.first().getAttribute('title')).toBe('skipped: deadline_passed')
      expect(await page.locator('#wheel-decisions summary').textContent()).toBe("Why: the ETH wheel's latest decisions")
      await wallet.shot(page, 'decisions-01-wheel-log')
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 60_000)
})
