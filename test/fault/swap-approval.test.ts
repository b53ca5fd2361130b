/**
 * Fault suite, part 1 (a bug this suite found, fixed): a worker SIGKILLed after the swap wallet's
 * first approval of the pool is broadcast, and before its receipt is read.
 *
 * The restarted ladder asks the adapter which approvals the swap needs; the approval is mined by
 * then, the allowance suffices, so none is asked for. `ensureApprovals` (packages/swap ladder.ts)
 * used to never return to the open outbox row: it stayed `broadcast` forever and the gas the
 * approval burnt was never journaled. It now settles every open approval row of the wallet first.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ChaosRunner, chaosRunner } from './fixtures/chaos-runner'
import { SWAP_CHAIN } from './fixtures/child-world'
import { seededRng } from './fixtures/seed'
import { type FaultWorld, startFaultWorld, USDC } from './fixtures/world'

describe('fault: a worker SIGKILLed between a swap approval’s broadcast and its receipt', () => {
  let world: FaultWorld
  let runner: ChaosRunner

  beforeAll(async () => {
    world = await startFaultWorld()
    runner = await chaosRunner(world)
  }, 120_000)
  afterAll(async () => {
    await runner?.close()
    await world?.close()
  })

  let approval: { tx_hash: `0x${string}`; state: string } | undefined

  it('killed right after the approval is broadcast, the restart executes the swap', async () => {
    const [user] = await world.addUsers(1, seededRng(1))
    const plan = {
      order: ['swap' as const],
      swaps: [
        {
          swapId: randomUUID(),
          userId: user?.id as string,
          subaccountId: 'conversions',
          chain: SWAP_CHAIN,
          sell: 'USDC',
          buy: 'ETH',
          amountIn: USDC(3_000).toString(),
          indexPrice: { num: '1', den: '3000' },
        },
      ],
      maxPasses: 4,
    }
    // a fresh swap wallet: checkpoint 1 signs the approval, 2 has broadcast it
    const first = await runner.life({ ...plan, kill: { kind: 'swap', at: 2 } })
    expect(first.lines).toContain('PARK swap 2 broadcast swap_approval')
    expect((await runner.life({ ...plan, kill: null })).ended).toBe('done')
    ;[approval] = await world.w.sql<{ tx_hash: `0x${string}`; state: string }[]>`
      select tx_hash, state from outbound_txs where purpose = 'swap_approval'`
    const receipt = await world.chainClients.publicClient.getTransactionReceipt({
      hash: approval?.tx_hash as `0x${string}`,
    })
    expect(receipt.status).toBe('success') // it happened on chain, and cost gas
  }, 120_000)

  it('and records the approval once it is final: its row confirmed, its gas_spent journaled', async () => {
    expect(approval).toBeDefined()
    const receipt = await world.chainClients.publicClient.getTransactionReceipt({
      hash: approval?.tx_hash as `0x${string}`,
    })
    expect(approval?.state).toBe('confirmed')
    const gas = await world.w.sql<{ amount: string }[]>`
      select payload->>'amount' as amount from ledger_events
      where type = 'gas_spent' and idempotency_key = ${`tx:${SWAP_CHAIN}:${approval?.tx_hash.toLowerCase()}:0`}`
    expect(gas.map((g) => BigInt(g.amount))).toEqual([receipt.gasUsed * receipt.effectiveGasPrice])
  })
})
