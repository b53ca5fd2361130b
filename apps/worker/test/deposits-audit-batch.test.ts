/**
 * The deposit audit's cost (docs/chains.md "Every deposit is accounted for"): 1,000 deposit
 * addresses read in one eth_call per batch, at the scan cursor's block (not the head), a rotation
 * that visits every address within ⌈addresses / batch⌉ ticks, and recent activity read ahead of
 * the rotation. anvil and Postgres; requests counted by a wrapper around the chain's client.
 */
import { randomBytes } from 'node:crypto'
import { auditDepositBalances, type DepositAuditDeps } from '@wh/deposits'
import { integrationContext, type RunningChain, rpcBatch, startChain } from '@wh/testkit'
import { Redis } from 'ioredis'
import { type Address, createTestClient, getAddress, http, numberToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { WorkerDeps } from '../src/ticks'
import { buildTestDeps } from './fixtures/deposit-stack'
import { type RpcWrapper, wrapChainClients } from './fixtures/rpc-wrapper'

const ADDRESSES = 1_000
/** below the registry's minimum ETH deposit (10^15 wei): no reading is a surplus */
const balanceOfIndex = (i: number) => BigInt(i + 1) * 1_000_000_000n

describe('the deposit audit over 1,000 deposit addresses', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let rpc: RpcWrapper
  let auditDeps: DepositAuditDeps
  let anvil: ReturnType<typeof createTestClient>
  const addresses: Address[] = []

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({
      // base's node; the other chains' RPCs answer nothing (testEnv): a test of one chain
      RPC_URL_BASE: chain.rpcUrl,
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    deps = buildTestDeps(ctx.config, ctx.database.sql, redis, {
      chainId: chain.chainId,
      usdc: getAddress(`0x${randomBytes(20).toString('hex')}`),
    })
    rpc = wrapChainClients(deps.clients, 'base')
    auditDeps = { ...deps, clients: rpc.clients }
    anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    for (let i = 0; i < ADDRESSES; i++) addresses.push(getAddress(`0x${randomBytes(20).toString('hex')}`))
    const sql = ctx.database.sql
    await sql`
      insert into users (wallet_address, hd_index)
      select '0x' || lpad(to_hex(i), 40, '0'), 100000 + i from generate_series(0, ${ADDRESSES - 1}) as i`
    await sql`
      insert into deposit_addresses (hd_index, address, user_id)
      select u.hd_index, x.address, u.id
      from unnest(${addresses}::text[]) with ordinality as x(address, n) join users u on u.hd_index = 100000 + x.n - 1`
    await rpcBatch(
      chain.rpcUrl,
      addresses.map((a, i) => ({ method: 'anvil_setBalance', params: [a, numberToHex(balanceOfIndex(i))] })),
    )
    await anvil.mine({ blocks: 1 })
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  /** the scan's cursor: the audit reads at next_block − 1 */
  async function scannedUpTo(block: bigint) {
    await ctx.database.sql`
      insert into chain_cursors (chain, next_block) values ('base', ${(block + 1n).toString()})
      on conflict (chain) do update set next_block = excluded.next_block`
  }
  async function readings() {
    const rows = await ctx.database.sql<{ address: string; balance: string; checked_block: string }[]>`
      select address, balance::text, checked_block::text from deposit_balance_audits where chain = 'base'`
    return new Map(rows.map((r) => [r.address, r]))
  }

  it('reads every balance with one eth_call per batch, at the block the scan has recorded', async () => {
    const block = await deps.clients.get('base')?.publicClient.getBlockNumber({ cacheTime: 0 })
    await scannedUpTo(block as bigint)
    // balances change after that block: the audit must not see them (anvil_setBalance edits the
    // newest state, so mine past the block first)
    await anvil.mine({ blocks: 1 })
    await rpcBatch(chain.rpcUrl, [{ method: 'anvil_setBalance', params: [addresses[0], numberToHex(10n ** 18n)] }])
    await anvil.mine({ blocks: 3 })

    rpc.reset()
    const r = await auditDepositBalances(auditDeps, 'base')
    expect(r).toMatchObject({
      status: 'audited',
      block,
      read: ADDRESSES,
      rotation: ADDRESSES,
      surpluses: 0,
      rpcCalls: 1,
    })
    // the whole tick talked to the node once
    expect(Object.fromEntries(rpc.calls)).toEqual({ eth_call: 1 })
    const seen = await readings()
    expect(seen.size).toBe(ADDRESSES)
    addresses.forEach((a, i) => {
      expect(seen.get(a)).toEqual({ address: a, balance: balanceOfIndex(i).toString(), checked_block: String(block) })
    })

    // smaller batches: ⌈1,000 / 250⌉ calls, the same balances
    rpc.reset()
    const quarter = await auditDepositBalances(auditDeps, 'base', { balanceBatch: 250 })
    expect(quarter.read).toBe(ADDRESSES)
    expect(rpc.count('eth_call')).toBe(4)
    expect((await readings()).get(addresses[999] as string)?.balance).toBe(balanceOfIndex(999).toString())
    await rpcBatch(chain.rpcUrl, [
      { method: 'anvil_setBalance', params: [addresses[0], numberToHex(balanceOfIndex(0))] },
    ])
    await anvil.mine({ blocks: 1 })
  })

  it('the rotation visits every address within ⌈addresses / batch⌉ ticks, then starts over', async () => {
    await ctx.database.sql`update deposit_audit_cursors set next_hd_index = 0 where chain = 'base'`
    await ctx.database.sql`delete from deposit_balance_audits`
    const [before] = await ctx.database.sql<{ rotations: number }[]>`
      select rotations from deposit_audit_cursors where chain = 'base'`
    const perTick: number[] = []
    for (let tick = 0; tick < 3; tick++) {
      rpc.reset()
      const r = await auditDepositBalances(auditDeps, 'base', { rotationBatch: 400 })
      perTick.push(r.read)
      expect(rpc.count('eth_call')).toBe(1)
    }
    // the third tick reaches the end and goes on from the lowest hd_index: a full batch every tick
    expect(perTick).toEqual([400, 400, 400])
    expect((await readings()).size).toBe(ADDRESSES)
    const [after] = await ctx.database.sql<{ rotations: number; next_hd_index: number }[]>`
      select rotations, next_hd_index from deposit_audit_cursors where chain = 'base'`
    expect(after).toEqual({ rotations: (before?.rotations ?? 0) + 1, next_hd_index: 100_000 + 200 })
  })

  it('an address with a new deposit is read in the next tick, ahead of the rotation', async () => {
    const head = (await deps.clients.get('base')?.publicClient.getBlockNumber({ cacheTime: 0 })) as bigint
    await scannedUpTo(head)
    await auditDepositBalances(auditDeps, 'base', { rotationBatch: 10 })
    // a deposit recorded by the scan in a later block, at an address the rotation is far from
    await anvil.mine({ blocks: 1 })
    const target = addresses[900] as Address
    await ctx.database.sql`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      select 'base', ${`0x${randomBytes(32).toString('hex')}`}, 0, ${(head + 1n).toString()}, user_id, hd_index, address,
        'USDC', 5000000, 'detected'
      from deposit_addresses where address = ${target}`
    await scannedUpTo(head + 1n)
    const r = await auditDepositBalances(auditDeps, 'base', { rotationBatch: 10 })
    expect(r.priority).toBe(1)
    expect(r.read).toBe(11)
    expect((await readings()).get(target)?.checked_block).toBe(String(head + 1n))
    // read once: the next tick does not take it again
    expect((await auditDepositBalances(auditDeps, 'base', { rotationBatch: 10 })).priority).toBe(0)
  })
})
