import type { Browser } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Api } from '../../api/test/support'
import { connectAndSignIn, type ServedConsole, servedConsole, walletBrowser } from './support'

const DEST = '0x52908400098527886E0F7030069857D2E4169EE7'

describe('the console shows the account stream', () => {
  let served: ServedConsole
  let api: Api
  let base: string
  let browser: Browser

  beforeAll(async () => {
    served = await servedConsole()
    ;({ api, base, browser } = served)
  }, 180_000)

  afterAll(async () => {
    await served?.close()
  })

  it('lists the user’s events live, in seq order, after signing in', async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const wallet = await walletBrowser(browser, alice)
    const sockets: string[] = []
    wallet.context.on('page', (p) => p.on('websocket', (ws) => sockets.push(ws.url())))
    try {
      const page = await wallet.open(`${base}/console/`)
      await connectAndSignIn(page, alice)
      await page.getByTestId('account-stream-status').getByText('Account: open').waitFor()
      await page.getByText('Nothing yet in this session').waitFor()
      await wallet.shot(page, 'account-stream-01-open')

      const sql = api.ctx.database.sql
      const [user] = await sql<{ id: string }[]>`select id from users where wallet_address = ${alice.address}`
      const userId = user?.id as string
      await sql`
        insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
        values ('base', ${`0x${'2e'.repeat(32)}`}, 0, 1, ${userId}, 0, ${DEST}, 'USDC', '1500000000', 'detected')`
      await page.getByTestId('activity').getByText('Deposit of 1,500.00 USDC credited (base).').waitFor()

      const [w] = await sql<{ id: string }[]>`
        insert into withdrawals (user_id, state, currency, amount, chain, destination)
        values (${userId}, 'requested', 'USDC', '25000000', 'base', ${DEST}) returning id`
      await sql`update withdrawals set tx_hash = ${`0x${'ab'.repeat(32)}`} where id = ${w?.id as string}`
      await page
        .getByTestId('activity')
        .getByText(/Withdrawal of 25.00 USDC sent: transaction 0xabababab/)
        .waitFor()
      const lines = await page.locator('[data-testid="activity"] li').allTextContents()
      // newest first: the three events, in seq order from the bottom
      expect(lines.map((l) => l.replace(/^.*?\)\s*/, ''))).toEqual([
        expect.stringMatching(/^Withdrawal of 25.00 USDC sent: transaction 0xabababab/),
        expect.stringMatching(/^Withdrawal of 25.00 USDC requested to 0x52908400/),
        'Deposit of 1,500.00 USDC credited (base).',
      ])
      // the deposit and the withdrawal are live notices too; the balance followed without a reload
      await page.getByTestId('notices').getByText('Deposit of 1,500.00 USDC credited (base).').waitFor()
      await wallet.shot(page, 'account-stream-02-events')

      const account = sockets.filter((u) => new URL(u).pathname === '/ws/account')
      expect(account.length).toBeGreaterThan(0)
      for (const u of account) expect(new URL(u).search).toBe('')
      expect(wallet.pageErrors).toEqual([])
    } finally {
      await wallet.context.close()
    }
  }, 90_000)
})
