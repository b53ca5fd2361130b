/**
 * The platform's own capital (docs/ledger.md "Platform capital"), against the Derive simulator: the
 * funding subaccount opened by a first deposit diverges from a journal that does not know that money
 * (what every fresh local run alerted); journaled as capital, by the operator's CLI (an approver,
 * signed in) or by the local run's setup (packages/wallet/scripts/local-stack.ts), it reconciles,
 * once: the reference is the key.
 */

import { systemClock } from '@wh/core'
import { balanceOf, EXCHANGE_CHAIN, PLATFORM_EQUITY, platformHot } from '@wh/ledger'
import { listOperatorActions, recordCapital } from '@wh/ops'
import { findFundingDivergences } from '@wh/subaccounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import { type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'
import { makeOperators, runOpsCli } from './fixtures/operators'

describe("the platform's capital, journaled", () => {
  let stack: ExchangeStack
  beforeAll(async () => {
    // the funding subaccount opened by a first deposit of 1 USDC, as the local run opens it
    stack = await startExchangeStack({ wallet: { USDC: '1' } })
  })
  afterAll(() => stack?.close())

  const divergences = () =>
    findFundingDivergences(
      stack.deps,
      reconcileSources,
      stack.platform.fundingSubaccountId as number,
      { epsilon: '0.01', nowMs: stack.sim.control.nowMs() },
      silent,
    )
  const txHash = `0x${'ab'.repeat(32)}`
  const reference = `tx:901:${txHash}`

  it('unjournaled, the opening deposit is a divergence; journaled as capital, the funding subaccount reconciles', async () => {
    expect((await divergences()).map((d) => [d.currency, d.delta])).toEqual([['USDC', 1_000_000n]])
    const r = await recordCapital(stack.sql, systemClock, {
      direction: 'contributed',
      holding: 'hot',
      chain: EXCHANGE_CHAIN,
      currency: 'USDC',
      amount: 1_000_000n,
      reference: { chainId: 901, txHash },
      reason: 'the funding subaccount opened by its first deposit',
      actor: 'alice',
    })
    expect(r).toMatchObject({ duplicate: false, idempotencyKey: `capital_contributed:${reference}` })
    expect(await divergences()).toEqual([])
    expect(await balanceOf(stack.sql, platformHot(EXCHANGE_CHAIN), 'USDC')).toBe(1_000_000n)
    expect(await balanceOf(stack.sql, PLATFORM_EQUITY, 'USDC')).toBe(-1_000_000n)
    // the same movement again: nothing more
    const again = await recordCapital(stack.sql, systemClock, {
      direction: 'contributed',
      holding: 'hot',
      chain: EXCHANGE_CHAIN,
      currency: 'USDC',
      amount: 1_000_000n,
      reference: { chainId: 901, txHash },
      reason: 'again',
      actor: 'alice',
    })
    expect(again.duplicate).toBe(true)
    expect(await balanceOf(stack.sql, platformHot(EXCHANGE_CHAIN), 'USDC')).toBe(1_000_000n)
    const actions = await listOperatorActions(stack.sql, { subject: `capital:${reference}` })
    expect(actions.map((a) => [a.action, a.actor])).toEqual([['capital_recorded', 'alice']])
  })

  it("an operator's top-up through the CLI: an approver, signed in; an operator's role is refused", async () => {
    stack.platform.fund('USDC', '250')
    expect((await divergences()).map((d) => [d.currency, d.delta])).toEqual([['USDC', 250_000_000n]])
    const pw = await makeOperators(stack.ctx.ownerUrl, [
      { name: 'otto', role: 'operator' },
      { name: 'alice', role: 'approver' },
    ])
    const args = (operator: string) => [
      '--contribute',
      '--holding',
      'hot',
      '--chain',
      'derive',
      '--currency',
      'USDC',
      '--amount',
      '250',
      '--reference',
      'treasury:2026-01-05:1',
      '--reason',
      'float for the fundings of the week',
      '--operator',
      operator,
    ]
    const refused = await runOpsCli('capital.ts', args('otto'), stack.ctx.env, `${pw.otto}\n`)
    expect([refused.code, refused.out?.error]).toEqual([1, 'ROLE_REQUIRED'])
    const done = await runOpsCli('capital.ts', args('alice'), stack.ctx.env, `${pw.alice}\n`)
    expect(done.code, done.text).toBe(0)
    expect(done.out).toMatchObject({ duplicate: false, idempotencyKey: 'capital_contributed:treasury:2026-01-05:1' })
    expect(await divergences()).toEqual([])
  }, 120_000)
})
