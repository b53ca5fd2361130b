/**
 * The outbox against a real anvil node and a real Postgres: exactly one transaction per
 * (purpose, refId, step), distinct nonces under concurrency, the stored bytes re-broadcast after
 * a crash, and finality by the chain's confirmations.
 */
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type Address,
  BaseError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  ExecutionRevertedError,
  encodeFunctionData,
  getAddress,
  http,
  parseEther,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildChainClients,
  buildChainRegistry,
  type ChainClients,
  confirmOutbound,
  deployTestUsdc,
  feePaidWei,
  OutboundNotHeldError,
  type OutboxDeps,
  OutboxMismatchError,
  readHeldEvidence,
  resolveHeldOutbound,
  sendOnce,
  testUsdcAbi,
} from '../src/index'

const CONFIRMATIONS = 2
const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const sender = privateKeyToAccount(TEST_PRIVATE_KEYS[2])
const RECIPIENT = getAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')

describe('outbox (crash-safe sender) on a real chain', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let deps: OutboxDeps
  let base: ChainClients
  let mine: (blocks?: number) => Promise<void>
  let usdcAddress: Address
  let ref = 0
  const nextRef = () => `test-${Date.now()}-${ref++}`

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
    const transport = http(chain.rpcUrl)
    const usdc = await deployTestUsdc(
      createWalletClient({ account: deployer, transport }),
      createPublicClient({ transport }),
    )
    usdcAddress = usdc
    const registry = buildChainRegistry(ctx.config, {
      base: { chainId: chain.chainId, usdc, confirmations: CONFIRMATIONS },
    })
    const clients = buildChainClients(registry)
    deps = { sql: ctx.database.sql, clients, registry }
    base = clients.get('base') as ChainClients
    const mint = await base.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [sender.address, 1_000_000_000n],
    })
    await base.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = (blocks = CONFIRMATIONS) => anvil.mine({ blocks })
  })
  afterAll(async () => {
    await ctx?.database.close()
    await chain?.stop()
  })

  const transfer = (refId: string, amountBaseUnits = 1_000_000n) =>
    ({
      chain: 'base',
      purpose: 'withdrawal',
      refId,
      signer: sender,
      to: RECIPIENT,
      token: 'USDC',
      amountBaseUnits,
    }) as const

  it('ten concurrent sends of one (purpose, refId, step) make one row and one transaction', async () => {
    const refId = nextRef()
    const records = await Promise.all(Array.from({ length: 10 }, () => sendOnce(deps, transfer(refId))))
    expect(new Set(records.map((r) => r.id)).size).toBe(1)
    expect(new Set(records.map((r) => r.txHash)).size).toBe(1)
    const rows = await ctx.database.sql`select 1 from outbound_txs where ref_id = ${refId}`
    expect(rows).toHaveLength(1)
    const again = await sendOnce(deps, { ...transfer(refId), amountBaseUnits: 5n })
    expect(again.txHash).toBe(records[0]?.txHash) // the first signed amount is the one
  })

  it('concurrent sends of different refs from one sender get distinct, gapless nonces and all mine', async () => {
    const refs = Array.from({ length: 8 }, nextRef)
    const records = await Promise.all(refs.map((r) => sendOnce(deps, transfer(r))))
    const nonces = records.map((r) => r.nonce).sort((a, b) => a - b)
    expect(new Set(nonces).size).toBe(8)
    expect((nonces.at(-1) ?? 0) - (nonces[0] ?? 0)).toBe(7)
    await mine()
    for (const r of records) expect((await confirmOutbound(deps, r.id)).state).toBe('confirmed')
  })

  it('a row is final only with the chain confirmations, then carries its fee', async () => {
    const rec = await sendOnce(deps, { ...transfer(nextRef()), token: 'ETH', amountBaseUnits: parseEther('0.001') })
    const mined = await confirmOutbound(deps, rec.id)
    expect(mined.state).toBe('broadcast')
    expect(mined.blockNumber).toBeTypeOf('bigint')
    await mine()
    const done = await confirmOutbound(deps, rec.id)
    expect(done.state).toBe('confirmed')
    expect(feePaidWei(done)).toBeGreaterThan(0n)
  })

  it('a crash after recording and before the broadcast: the retry sends the same stored bytes', async () => {
    const refId = nextRef()
    const crashing: OutboxDeps = {
      ...deps,
      hooks: {
        afterSigned: () => {
          throw new Error('killed')
        },
      },
    }
    await expect(sendOnce(crashing, transfer(refId))).rejects.toThrow('killed')
    const [row] = await ctx.database.sql<{ state: string; tx_hash: string }[]>`
      select state, tx_hash from outbound_txs where ref_id = ${refId}`
    expect(row?.state).toBe('signed')
    const retry = await sendOnce(deps, transfer(refId))
    expect(retry.txHash).toBe(row?.tx_hash)
    await mine()
    expect((await confirmOutbound(deps, retry.id)).state).toBe('confirmed')
  })

  it('a nonce used by a transaction the outbox never signed is never taken for "failed": the row is held for an operator, with one alert', async () => {
    const refId = nextRef()
    const crashing: OutboxDeps = { ...deps, hooks: { afterSigned: () => Promise.reject(new Error('killed')) } }
    await expect(sendOnce(crashing, transfer(refId))).rejects.toThrow('killed')
    const [row] = await ctx.database.sql<{ id: string; nonce: string }[]>`
      select id, nonce from outbound_txs where ref_id = ${refId}`
    // someone sends from the same key outside the outbox, taking that nonce
    const hash = await base.walletClient.sendTransaction({
      account: sender,
      to: RECIPIENT,
      value: 1n,
      nonce: Number(row?.nonce),
    })
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    await mine()
    const alerts: string[] = []
    const watching: OutboxDeps = {
      ...deps,
      contradictionHold: { readings: 3, afterMs: 0 },
      alerter: { channel: 'log', alert: async (text) => void alerts.push(text) },
    }
    // each reading counts, none concludes
    expect((await confirmOutbound(watching, row?.id ?? '')).state).toBe('signed')
    expect((await confirmOutbound(watching, row?.id ?? '')).state).toBe('signed')
    expect(alerts).toHaveLength(0)
    expect((await confirmOutbound(watching, row?.id ?? '')).state).toBe('held')
    expect((await confirmOutbound(watching, row?.id ?? '')).state).toBe('held')
    expect(alerts).toEqual(['outbound transaction held: the chain contradicts itself; an operator decides'])
    const [held] = await ctx.database.sql<{ contradictions: number; hold_reason: string }[]>`
      select contradictions, hold_reason from outbound_txs where id = ${row?.id ?? ''}`
    expect(held?.contradictions).toBe(3)
    expect(held?.hold_reason).toMatch(/nonce .* is used at confirmed depth/)

    // the operator, having found the other transaction, ends it as never mined: the chain agrees
    // (the nonce is used at confirmed depth, no version of ours has a receipt)
    const evidence = await readHeldEvidence({ sql: ctx.database.sql, client: base }, row?.id ?? '', 'failed')
    expect(evidence).toMatchObject({ verdict: 'failed', nonceAtDepth: Number(row?.nonce) + 1 })
    await expect(
      resolveHeldOutbound(ctx.database.sql, row?.id ?? '', evidence, 'nonce taken by a manual transfer'),
    ).resolves.toMatchObject({ state: 'failed' })
    await expect(resolveHeldOutbound(ctx.database.sql, row?.id ?? '', evidence, 'again')).resolves.toBeUndefined()
    await expect(
      readHeldEvidence({ sql: ctx.database.sql, client: base }, row?.id ?? '', 'failed'),
    ).rejects.toBeInstanceOf(OutboundNotHeldError)
    const next = await sendOnce(deps, transfer(nextRef()))
    expect(next.nonce).toBe(Number(row?.nonce) + 1)
    await mine()
    expect((await confirmOutbound(deps, next.id)).state).toBe('confirmed')
  })

  it('a reading that no longer contradicts (a receipt after all) clears the count; an operator recheck returns a held row to the chain', async () => {
    const rec = await sendOnce(deps, transfer(nextRef()))
    await mine()
    // as if two earlier readings had found the nonce used and no receipt
    await ctx.database
      .sql`update outbound_txs set contradictions = 2, first_contradiction_at = now() where id = ${rec.id}`
    const done = await confirmOutbound({ ...deps, contradictionHold: { readings: 3, afterMs: 0 } }, rec.id)
    expect(done.state).toBe('confirmed')
    const [after] = await ctx.database.sql<{ contradictions: number }[]>`
      select contradictions from outbound_txs where id = ${rec.id}`
    expect(after?.contradictions).toBe(0)

    const other = await sendOnce(deps, transfer(nextRef()))
    await ctx.database.sql`update outbound_txs set state = 'held', hold_reason = 'test' where id = ${other.id}`
    expect((await confirmOutbound(deps, other.id)).state).toBe('held') // a held row is left alone
    await resolveHeldOutbound(ctx.database.sql, other.id, { verdict: 'recheck' }, 'provider fixed')
    await mine()
    expect((await confirmOutbound(deps, other.id)).state).toBe('confirmed')
  })

  it('a transaction priced under a fee spike is replaced with the same nonce and higher fees; the mined version is the record', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    const before = await base.publicClient.getBalance({ address: RECIPIENT })
    await anvil.setAutomine(false)
    try {
      // signed and broadcast at today's fees; then the base fee jumps past its max fee and the
      // node drops the transaction from its pool instead of mining it
      const rec = await sendOnce(deps, { ...transfer(nextRef()), token: 'ETH', amountBaseUnits: 777n })
      const pending = await base.publicClient.getTransaction({ hash: rec.txHash })
      await anvil.setNextBlockBaseFeePerGas({ baseFeePerGas: (pending.maxFeePerGas ?? 1n) * 2n })
      await anvil.mine({ blocks: 1 })
      const stuck = await confirmOutbound(deps, rec.id)
      expect(stuck.blockNumber).toBeUndefined()
      // young, or without a signer: nothing is replaced
      expect((await confirmOutbound({ ...deps, signerOf: async () => sender }, rec.id)).txHash).toBe(rec.txHash)
      expect((await confirmOutbound({ ...deps, replaceAfterMs: 0 }, rec.id)).txHash).toBe(rec.txHash)

      const replacing: OutboxDeps = {
        ...deps,
        replaceAfterMs: 0,
        signerOf: async (a) => (a === sender.address ? sender : undefined),
      }
      const bumped = await confirmOutbound(replacing, rec.id)
      expect(bumped.txHash).not.toBe(rec.txHash)
      expect(bumped.nonce).toBe(rec.nonce)
      const first = await base.publicClient.getTransaction({ hash: bumped.txHash })
      expect(first.nonce).toBe(rec.nonce)
      await anvil.mine({ blocks: CONFIRMATIONS + 1 })
      const done = await confirmOutbound(replacing, rec.id)
      expect(done).toMatchObject({ state: 'confirmed', nonce: rec.nonce, txHash: bumped.txHash })
      const versions = await ctx.database.sql<{ version: number; tx_hash: string }[]>`
        select version, tx_hash from outbound_tx_versions where outbound_id = ${rec.id} order by version`
      expect(versions.map((v) => v.tx_hash)).toEqual([rec.txHash, bumped.txHash])
      const receipt = await base.publicClient.getTransactionReceipt({ hash: done.txHash })
      expect(receipt.status).toBe('success')
      expect(feePaidWei(done)).toBe(receipt.gasUsed * receipt.effectiveGasPrice)
      // one payment, whatever the number of versions
      expect((await base.publicClient.getBalance({ address: RECIPIENT })) - before).toBe(777n)
    } finally {
      await anvil.setAutomine(true)
    }
  })

  it('a receipt whose block a reorg removed is forgotten; the transaction is final only once mined again', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    const rec = await sendOnce(deps, { ...transfer(nextRef()), token: 'ETH', amountBaseUnits: 555n })
    const mined = await confirmOutbound(deps, rec.id)
    expect(mined.blockNumber).toBeTypeOf('bigint')
    // the block holding it and the one after are replaced by blocks without it
    await anvil.request({ method: 'anvil_reorg' as never, params: [2, []] as never })
    const after = await confirmOutbound(deps, rec.id)
    expect(after.state).toBe('broadcast')
    await mine(CONFIRMATIONS + 1)
    const done = await confirmOutbound(deps, rec.id)
    expect(done.state).toBe('confirmed')
    const receipt = await base.publicClient.getTransactionReceipt({ hash: done.txHash })
    expect(done.blockNumber).toBe(receipt.blockNumber)
  })

  it('a call whose gas estimate reverts throws the revert and stores nothing; the next send takes that nonce', async () => {
    const refId = nextRef()
    const pending = await base.publicClient.getTransactionCount({ address: sender.address, blockTag: 'pending' })
    // only the owner may mint: the node refuses the call at estimation
    const call = {
      kind: 'call',
      chain: 'base',
      purpose: 'swap',
      refId,
      signer: sender,
      to: usdcAddress,
      data: encodeFunctionData({ abi: testUsdcAbi, functionName: 'mint', args: [sender.address, 1n] }),
      valueWei: 0n,
      token: 'USDC',
      amountBaseUnits: 1n,
    } as const
    const err = await sendOnce(deps, call).catch((e: unknown) => e)
    // callers (the swap ladder) tell "it would revert" from an outage by this cause
    expect(err instanceof BaseError && err.walk((x) => x instanceof ExecutionRevertedError) !== null).toBe(true)
    const rows = await ctx.database.sql`select id from outbound_txs where ref_id = ${refId}`
    expect(rows).toHaveLength(0)
    const next = await sendOnce(deps, transfer(nextRef()))
    expect(next.nonce).toBe(pending)
    await mine()
    expect((await confirmOutbound(deps, next.id)).state).toBe('confirmed')
  })

  it('the same (purpose, refId, step) with another recipient is refused', async () => {
    const refId = nextRef()
    await sendOnce(deps, transfer(refId))
    await expect(sendOnce(deps, { ...transfer(refId), to: deployer.address })).rejects.toBeInstanceOf(
      OutboxMismatchError,
    )
  })
})
