/**
 * The deposit audit on a real chain (docs/chains.md "Every deposit is accounted for"): ETH sent to
 * a deposit address by a smart wallet's internal call is credited exactly once, next to the
 * scanner's top-level deposit, and swept; without a trace API the surplus is alerted once,
 * recorded, and left at the address by a USDC sweep's gas top-up; a surplus seen once and then
 * explained by the records ends without an alert. anvil, Postgres, Redis; the smart wallet is
 * contracts/TestSmartWallet.sol.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import {
  AUDIT_TRACE_FAILURE_READINGS,
  auditDepositBalances,
  DEPOSIT_AUDIT_EVERY_MS,
  DepositAddressBook,
  type DepositAuditDeps,
  type DepositScanDeps,
  scanChainDeposits,
  sweepDeposit,
} from '@wh/deposits'
import { balanceOf, chainEventKey, userTransit } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import {
  type AlertFields,
  buildChainClients,
  buildChainRegistry,
  CHAIN_NAMES,
  type ChainClients,
  ChainGuard,
  type ChainInfo,
  confirmOutbound,
  DuplicateChainIdError,
  deployTestUsdc,
  expectedEthBalances,
  INTERNAL_TRANSFER_LOG_INDEX_BASE,
  internalTransferLogIndex,
  NATIVE_TRANSFER_LOG_INDEX,
  sendOnce,
  testSmartWalletAbi,
  testSmartWalletBytecode,
  testUsdcAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  parseEther,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ticks } from '../src/jobs/index'
import type { TickDefinition, WorkerDeps } from '../src/ticks'
import { buildTestDeps, TEST_CONFIRMATIONS } from './fixtures/deposit-stack'
import { type RpcWrapper, wrapChainClients } from './fixtures/rpc-wrapper'

const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('the deposit audit: every deposit that reaches a deposit address is accounted for', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let base: ChainClients
  let usdc: Address
  let smartWallet: Address
  let hot: Address
  let scanDeps: DepositScanDeps
  /** the same node behind a wrapper that counts requests (traces served) */
  let traced: RpcWrapper
  /** ... and one that answers trace_* "method not found", as a provider without the trace API */
  let untraced: RpcWrapper
  let nextHd = 3000
  let mine: (blocks?: number) => Promise<void>
  const alerts: Array<{ text: string; fields: AlertFields | undefined }> = []
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({
      // base's node; the other chains' RPCs answer nothing (testEnv): a test of one chain
      RPC_URL_BASE: chain.rpcUrl,
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const transport = http(chain.rpcUrl)
    const publicClient = createPublicClient({ transport })
    const walletClient = createWalletClient({ account: deployer, transport })
    usdc = await deployTestUsdc(walletClient, publicClient)
    deps = {
      ...buildTestDeps(ctx.config, ctx.database.sql, redis, { chainId: chain.chainId, usdc }),
      alerter: {
        channel: 'log',
        alert: async (text, fields) => {
          alerts.push({ text, fields })
        },
      },
    }
    base = deps.clients.get('base') as ChainClients
    hot = deps.hotWallet('base').address
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = async (blocks = TEST_CONFIRMATIONS) => anvil.mine({ blocks })
    scanDeps = { ...deps, addressBook: new DepositAddressBook() }
    traced = wrapChainClients(deps.clients, 'base')
    untraced = wrapChainClients(deps.clients, 'base', { refuse: (m) => m.startsWith('trace_') })
    const hash = await walletClient.deployContract({
      abi: testSmartWalletAbi,
      bytecode: testSmartWalletBytecode,
      value: parseEther('10'),
      chain: null,
    })
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    smartWallet = receipt.contractAddress as Address
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  const sql = () => ctx.database.sql
  const auditWith = (w: RpcWrapper): DepositAuditDeps => ({ ...deps, clients: w.clients })

  async function newUser(): Promise<{ id: string; hdIndex: number; address: Address }> {
    const hdIndex = nextHd++
    const [row] = await sql()<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})
      returning id`
    return { id: (row as { id: string }).id, hdIndex, address: deps.keyring.address(hdIndex) }
  }
  /** ETH to `to` by an internal call: the smart wallet's execute, sent by its owner. */
  async function internalPayment(to: Address, value: bigint): Promise<Hex> {
    const hash = await base.walletClient.writeContract({
      account: deployer,
      address: smartWallet,
      abi: testSmartWalletAbi,
      functionName: 'execute',
      args: [to, value, '0x'],
    })
    const r = await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    expect(r.status).toBe('success')
    return hash
  }
  async function topLevelPayment(to: Address, value: bigint): Promise<Hex> {
    const hash = await base.walletClient.sendTransaction({ account: deployer, to, value })
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    return hash
  }
  async function mintUsdc(to: Address, amount: bigint) {
    const hash = await base.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
    })
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  /** confirmations on top, then the scan up to them: the audit reads at the scan's cursor − 1 */
  async function confirmAndScan() {
    await mine()
    for (let i = 0; i < 20; i++) {
      if ((await scanChainDeposits(scanDeps, 'base')).status !== 'scanned') return
    }
  }
  async function depositsAt(address: Address) {
    return sql()<{ id: string; token: string; tx_hash: string; log_index: string; amount: string; state: string }[]>`
      select id, token, tx_hash, log_index::text, amount::text, state from deposits where address = ${address}
      order by log_index`
  }
  async function episodes(address: Address) {
    return sql()<
      {
        state: string
        amount: string
        credited_amount: string
        readings: number
        reason: string | null
        alerted_at: Date | null
      }[]
    >`select state, amount::text, credited_amount::text, readings, reason, alerted_at from deposit_surpluses
      where address = ${address} order by first_seen_block`
  }
  async function eventCount(): Promise<number> {
    const [r] = await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events`
    return (r as { n: number }).n
  }
  async function untilSwept(id: string) {
    for (let i = 0; i < 10; i++) {
      if ((await sweepDeposit(deps, id)) === 'swept') return
      await mine()
    }
    throw new Error(`deposit ${id} not swept`)
  }
  async function unexplainedAt(address: Address): Promise<bigint> {
    const onChain = await base.publicClient.getBalance({ address })
    const e = (await expectedEthBalances(sql(), { chain: 'base', addresses: [address] })).get(address)
    return onChain - (e?.expected ?? 0n)
  }

  it('credits an internal transfer once, at its second reading, beside the top-level deposit the scanner credits; the sweep moves both', async () => {
    const u = await newUser()
    const internalHash = await internalPayment(u.address, parseEther('0.3'))
    const topHash = await topLevelPayment(u.address, parseEther('0.05'))
    await confirmAndScan()
    // the scanner sees the top-level payment only
    expect((await depositsAt(u.address)).map((d) => [d.tx_hash, d.log_index])).toEqual([
      [topHash.toLowerCase(), String(NATIVE_TRANSFER_LOG_INDEX)],
    ])

    // first reading: a surplus of exactly the internal payment, recorded, not acted on yet
    const first = await auditDepositBalances(auditWith(traced), 'base')
    expect(first.surpluses).toBe(1)
    expect(first.credited).toBe(0)
    expect(traced.count('trace_filter')).toBe(0)
    expect(await episodes(u.address)).toMatchObject([
      { state: 'open', readings: 1, amount: parseEther('0.3').toString() },
    ])

    // second reading: the traces explain it; the internal transfer is a deposit now
    const second = await auditDepositBalances(auditWith(traced), 'base')
    expect(second.credited).toBe(1)
    expect(second.alerted).toBe(0)
    const rows = await depositsAt(u.address)
    expect(rows.map((d) => [d.token, d.tx_hash, d.amount, d.state])).toEqual([
      ['ETH', topHash.toLowerCase(), parseEther('0.05').toString(), 'detected'],
      ['ETH', internalHash.toLowerCase(), parseEther('0.3').toString(), 'detected'],
    ])
    // the smart wallet's call is trace 1 of its transaction (trace 0 is the owner's top-level call)
    const internalIndex = Number(rows[1]?.log_index)
    expect(internalIndex).toBeGreaterThanOrEqual(INTERNAL_TRANSFER_LOG_INDEX_BASE)
    expect(internalIndex).toBe(internalTransferLogIndex(1))
    const keys = await sql()<{ type: string; idempotency_key: string }[]>`
      select type, idempotency_key from ledger_events where idempotency_key like ${`tx:base:${internalHash.toLowerCase()}:%`}
        or idempotency_key like ${`tx:base:${topHash.toLowerCase()}:%`}
      order by idempotency_key`
    expect(keys).toEqual(
      [
        {
          type: 'deposit_detected',
          idempotency_key: chainEventKey({ chain: 'base', txHash: topHash, logIndex: NATIVE_TRANSFER_LOG_INDEX }),
        },
        {
          type: 'deposit_detected',
          idempotency_key: chainEventKey({ chain: 'base', txHash: internalHash, logIndex: internalIndex }),
        },
      ].sort((a, b) => a.idempotency_key.localeCompare(b.idempotency_key)),
    )
    expect(await balanceOf(sql(), userTransit(u.id), 'ETH')).toBe(parseEther('0.35'))
    expect(await episodes(u.address)).toMatchObject([
      { state: 'credited', amount: '0', credited_amount: parseEther('0.3').toString(), alerted_at: null },
    ])

    // re-runs record nothing: no row, no event, no new episode, no alert
    const events = await eventCount()
    for (let i = 0; i < 2; i++) {
      const again = await auditDepositBalances(auditWith(traced), 'base')
      expect([again.surpluses, again.credited, again.alerted]).toEqual([0, 0, 0])
    }
    expect(await depositsAt(u.address)).toHaveLength(2)
    expect(await eventCount()).toBe(events)
    expect(await episodes(u.address)).toHaveLength(1)
    expect(await unexplainedAt(u.address)).toBe(0n)
    expect(alerts).toHaveLength(0)

    // both are swept like any ETH deposit: each pays its own gas, nothing unexplained is left
    const hotBefore = await base.publicClient.getBalance({ address: hot })
    for (const d of rows) await untilSwept(d.id)
    expect((await depositsAt(u.address)).map((d) => d.state)).toEqual(['swept', 'swept'])
    const swept = await sql()<{ amount: string }[]>`
      select amount::text from outbound_txs where purpose = 'sweep' and ref_id = any(${rows.map((d) => d.id)}::text[])`
    const sweptTotal = swept.reduce((s, r) => s + BigInt(r.amount), 0n)
    expect((await base.publicClient.getBalance({ address: hot })) - hotBefore).toBe(sweptTotal)
    expect(sweptTotal).toBeGreaterThan(parseEther('0.349'))
    expect(await unexplainedAt(u.address)).toBe(0n)
    await confirmAndScan()
    expect((await auditDepositBalances(auditWith(traced), 'base')).surpluses).toBe(0)
  })

  it('a surplus seen once, then explained by the records (a top-up whose receipt was recorded late), ends without an alert or a trace', async () => {
    const v = await newUser()
    const outbox = { sql: sql(), clients: deps.clients, registry: deps.registry }
    const topup = await sendOnce(outbox, {
      chain: 'base',
      purpose: 'gas_topup',
      refId: randomUUID(),
      signer: deps.gasWallet,
      to: v.address,
      token: 'ETH',
      amountBaseUnits: parseEther('0.01'),
    })
    await confirmAndScan()
    // mined on chain, but the worker has not read its receipt yet
    await sql()`update outbound_txs set gas_used = null, effective_gas_price = null, block_number = null, state = 'broadcast' where id = ${topup.id}`
    traced.reset()
    const before = alerts.length
    const first = await auditDepositBalances(auditWith(traced), 'base')
    expect(first.surpluses).toBe(1)
    expect(await episodes(v.address)).toMatchObject([{ state: 'open', readings: 1 }])
    await confirmOutbound(outbox, topup.id)
    const second = await auditDepositBalances(auditWith(traced), 'base')
    expect([second.surpluses, second.resolved, second.credited, second.alerted]).toEqual([0, 1, 0, 0])
    expect(await episodes(v.address)).toMatchObject([{ state: 'resolved', alerted_at: null }])
    expect(traced.count('trace_filter') + traced.count('trace_transaction')).toBe(0)
    expect(alerts.length).toBe(before)
  })

  it('traces that fail (not "method not found") are tried again each tick; the surplus is alerted only if it lasts', async () => {
    const x = await newUser()
    const hash = await internalPayment(x.address, parseEther('0.4'))
    await confirmAndScan()
    const flaky = wrapChainClients(deps.clients, 'base', { fail: (m) => m === 'trace_transaction' })
    const before = alerts.length
    const results = []
    for (let i = 0; i < AUDIT_TRACE_FAILURE_READINGS; i++) {
      results.push(await auditDepositBalances(auditWith(flaky), 'base'))
    }
    // readings 2 to 4 tried the traces and waited; the fifth reading alerted, once
    expect(results.map((r) => [r.traceFailed, r.alerted])).toEqual([
      [false, 0],
      [true, 0],
      [true, 0],
      [true, 0],
      [true, 1],
    ])
    expect(flaky.count('trace_transaction')).toBe(AUDIT_TRACE_FAILURE_READINGS - 1)
    expect(alerts.slice(before).map((a) => a.fields?.reason)).toEqual(['the traces could not be read'])
    expect(await episodes(x.address)).toMatchObject([{ state: 'open', reason: 'trace-failed', readings: 5 }])
    // the node serves the traces again: the transfer is credited and the episode ends
    const healed = await auditDepositBalances(auditWith(traced), 'base')
    expect(healed.credited).toBe(1)
    expect(await episodes(x.address)).toMatchObject([{ state: 'credited', amount: '0' }])
    expect((await depositsAt(x.address)).map((d) => d.tx_hash)).toEqual([hash.toLowerCase()])
  })

  it('without a trace API: the surplus is alerted once and recorded, and a USDC sweep tops up gas instead of spending it', async () => {
    const w = await newUser()
    await internalPayment(w.address, parseEther('0.2'))
    await confirmAndScan()
    const before = alerts.length
    const audit = () => auditDepositBalances(auditWith(untraced), 'base')

    expect((await audit()).alerted).toBe(0) // the first reading only records it
    const second = await audit()
    expect(second.alerted).toBe(1)
    expect(second.credited).toBe(0)
    expect(alerts.slice(before)).toHaveLength(1)
    expect(alerts.at(-1)?.fields).toMatchObject({
      chain: 'base',
      address: w.address,
      userId: w.id,
      surplusWei: parseEther('0.2').toString(),
      reason: "the chain's RPC has no trace API",
    })
    // no RPC URL (it carries a provider key) in what is sent
    expect(JSON.stringify(alerts.at(-1))).not.toContain(chain.rpcUrl)
    expect(await episodes(w.address)).toMatchObject([
      { state: 'open', reason: 'no-trace-api', amount: parseEther('0.2').toString(), credited_amount: '0' },
    ])
    for (let i = 0; i < 2; i++) expect((await audit()).alerted).toBe(0)
    expect(alerts.slice(before)).toHaveLength(1)
    // asked once per chain, the answer cached; nothing else of the trace API was tried
    expect(untraced.count('trace_filter')).toBe(1)
    expect(untraced.count('trace_transaction')).toBe(0)
    expect(await depositsAt(w.address)).toHaveLength(0)

    // a USDC deposit at that address: its sweep needs gas, and the 0.2 ETH nobody credited is not it
    await mintUsdc(w.address, USDC(15))
    await confirmAndScan()
    const [dep] = await depositsAt(w.address)
    expect(dep).toMatchObject({ token: 'USDC', state: 'detected' })
    await untilSwept(dep?.id as string)
    const out = await sql()<{ purpose: string }[]>`
      select purpose from outbound_txs where ref_id = ${dep?.id as string} order by step`
    expect(out.map((o) => o.purpose)).toEqual(['gas_topup', 'sweep'])
    expect(await base.publicClient.getBalance({ address: w.address })).toBeGreaterThanOrEqual(parseEther('0.2'))
    expect(await unexplainedAt(w.address)).toBe(parseEther('0.2'))

    // later readings still see it where it was: same episode, same amount, no second alert
    await confirmAndScan()
    expect((await audit()).alerted).toBe(0)
    expect(await episodes(w.address)).toMatchObject([{ state: 'open', amount: parseEther('0.2').toString() }])
    expect(alerts.slice(before)).toHaveLength(1)
    expect((await depositsAt(w.address)).filter((d) => d.token === 'ETH')).toHaveLength(0)
  })

  it('is registered as one tick per chain on the deposits queue, never run on a wrong network', async () => {
    const names = ticks.filter((t) => t.name.startsWith('deposits-audit-'))
    expect(names.map((t) => [t.name, t.queue, t.everyMs])).toEqual(
      CHAIN_NAMES.map((c) => [`deposits-audit-${c}`, 'deposits', DEPOSIT_AUDIT_EVERY_MS]),
    )
    // ethereum's RPC pointed at base's node: the guard refuses it
    const wrong = new Map(deps.registry)
    wrong.set('ethereum', { ...(deps.registry.get('ethereum') as ChainInfo), rpcUrl: chain.rpcUrl })
    const clients = buildChainClients(wrong)
    const wrongDeps = { ...deps, registry: wrong, clients, chainGuard: new ChainGuard(wrong, clients) }
    const ctxOf = { log: { info() {}, warn() {} }, deps: wrongDeps, queues: new Map() }
    const run = (c: string) =>
      (names.find((t) => t.name === `deposits-audit-${c}`) as TickDefinition).process({} as never, ctxOf)
    await expect(run('ethereum')).rejects.toMatchObject({ code: 'CHAIN_ID_MISMATCH' })
    // a second name of base's network cannot even be configured
    expect(() =>
      buildChainRegistry(ctx.config, { base: { chainId: chain.chainId }, arbitrum: { chainId: chain.chainId } }),
    ).toThrow(DuplicateChainIdError)
  })
})
