import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import {
  DepositAddressBook,
  type DepositScanDeps,
  type SweepDeps,
  scanChainDeposits,
  sweepDeposit,
  syncDepositAddresses,
} from '@wh/deposits'
import { balanceOf, platformExpenseGas, platformGas, userExternal, userTransit } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import {
  buildChainRegistry,
  CHAIN_NAMES,
  type ChainClients,
  configuredChainOverrides,
  confirmOutbound,
  DuplicateChainIdError,
  deployTestUsdc,
  sendOnce,
  testUsdcAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  http,
  parseEther,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { depositScanTicks, depositSweepProcessor, depositSweepTick } from '../src/jobs/deposits/ticks'
import { startRuntime } from '../src/runtime'
import type { WorkerDeps } from '../src/ticks'
import { buildTestDeps, TEST_CONFIRMATIONS } from './fixtures/deposit-stack'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('deposits: watch, sweep, crash safety (spec 2.1, 6.1) on a real chain', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let base: ChainClients
  let usdc: Address
  let hot: Address
  let nextHd = 1000
  let mine: (blocks?: number) => Promise<void>
  let scanDeps: DepositScanDeps
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

  beforeAll(async () => {
    // a test of one chain: base's node; the other chains' RPCs answer nothing (testEnv)
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const transport = http(chain.rpcUrl)
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
    deps = buildTestDeps(ctx.config, ctx.database.sql, redis, { chainId: chain.chainId, usdc })
    base = deps.clients.get('base') as ChainClients
    hot = deps.hotWallet('base').address
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = async (blocks = TEST_CONFIRMATIONS) => anvil.mine({ blocks })
    scanDeps = { ...deps, addressBook: new DepositAddressBook() }
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  async function newUser(): Promise<{ id: string; hdIndex: number; address: Address }> {
    const hdIndex = nextHd++
    const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`)
    const [row] = await ctx.database.sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${wallet}, ${hdIndex}) returning id`
    return { id: (row as { id: string }).id, hdIndex, address: deps.keyring.address(hdIndex) }
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
  async function sendEth(from: typeof deployer, to: Address, value: bigint) {
    const hash = await base.walletClient.sendTransaction({ account: from, to, value })
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  async function depositRow(address: Address, token: string) {
    const rows = await ctx.database.sql<{ id: string; state: string; amount: string }[]>`
      select id, state, amount from deposits where address = ${address} and token = ${token}`
    return rows
  }
  async function scanAll() {
    for (let i = 0; i < 20; i++) {
      const r = await scanChainDeposits(scanDeps, 'base')
      if (r.status !== 'scanned') return
    }
  }
  async function untilSwept(id: string, sweepDeps: SweepDeps = deps): Promise<void> {
    for (let i = 0; i < 10; i++) {
      if ((await sweepDeposit(sweepDeps, id)) === 'swept') return
      await mine()
    }
    throw new Error(`deposit ${id} not swept`)
  }
  async function eventsAbout(txHash: string) {
    return ctx.database.sql<{ type: string; idempotency_key: string }[]>`
      select type, idempotency_key from ledger_events where idempotency_key like ${`tx:base:${txHash.toLowerCase()}:%`}
      order by idempotency_key`
  }
  async function sweepTransfers(from: Address) {
    return base.publicClient.getContractEvents({
      address: usdc,
      abi: testUsdcAbi,
      eventName: 'Transfer',
      args: { from, to: hot },
      fromBlock: 0n,
    })
  }

  it('a deposit is detected exactly once across re-runs and a crash between scan and commit', async () => {
    const u = await newUser()
    await mintUsdc(u.address, USDC(25))
    await sendEth(deployer, u.address, parseEther('0.02'))
    await mine()
    const [{ next_block: before } = { next_block: null }] = await ctx.database.sql<{ next_block: string }[]>`
      select next_block from chain_cursors where chain = 'base'`

    // the crash: everything scanned and written, then the process dies before the commit
    await expect(
      scanChainDeposits(scanDeps, 'base', {
        beforeCommit: () => {
          throw new Error('crash before commit')
        },
      }),
    ).rejects.toThrow('crash before commit')
    expect(await depositRow(u.address, 'USDC')).toHaveLength(0)
    const [{ next_block: after } = { next_block: null }] = await ctx.database.sql<{ next_block: string }[]>`
      select next_block from chain_cursors where chain = 'base'`
    expect(after).toBe(before ?? '0') // the cursor did not move (a first run creates it at block 0 here)

    await scanAll()
    await scanAll()
    expect(await depositRow(u.address, 'USDC')).toMatchObject([{ state: 'detected', amount: '25000000' }])
    expect(await depositRow(u.address, 'ETH')).toMatchObject([{ state: 'detected', amount: '20000000000000000' }])

    // a replay from block 0 (a cursor reset) doubles nothing: rows and journal keys are unique
    await ctx.database.sql`update chain_cursors set next_block = 0 where chain = 'base'`
    const replay = await scanChainDeposits(scanDeps, 'base')
    expect(replay.detected).toBe(0)
    expect(replay.duplicates).toBeGreaterThanOrEqual(2)
    await scanAll()
    expect(await depositRow(u.address, 'USDC')).toHaveLength(1)
    expect(await balanceOf(ctx.database.sql, userTransit(u.id), 'USDC')).toBe(USDC(25))
    expect(await balanceOf(ctx.database.sql, userTransit(u.id), 'ETH')).toBe(parseEther('0.02'))
    expect(await balanceOf(ctx.database.sql, userExternal(u.id), 'USDC')).toBe(-USDC(25))
  })

  it('the cursor never passes confirmed depth, and gas-wallet top-ups are not deposits', async () => {
    await scanAll()
    const u = await newUser()
    await mintUsdc(u.address, USDC(7))
    await sendEth(privateKeyToAccount(ctx.config.keys.gasWalletPrivateKey), u.address, parseEther('0.01'))
    const head = await base.publicClient.getBlockNumber({ cacheTime: 0 })
    const r = await scanChainDeposits(scanDeps, 'base')
    // the mint's block is not TEST_CONFIRMATIONS deep yet: not read, and the cursor stops below it
    const [{ next_block }] = (await ctx.database.sql`
      select next_block from chain_cursors where chain = 'base'`) as unknown as [{ next_block: string }]
    expect(BigInt(next_block)).toBeLessThanOrEqual(head - BigInt(TEST_CONFIRMATIONS) + 1n)
    expect(r.detected).toBe(0)
    expect(await depositRow(u.address, 'USDC')).toHaveLength(0)

    await mine()
    await scanAll()
    expect(await depositRow(u.address, 'USDC')).toHaveLength(1)
    // the top-up came from the gas wallet (ignoreFrom): no ETH deposit
    expect(await depositRow(u.address, 'ETH')).toHaveLength(0)
    const [{ next_block: n2 }] = (await ctx.database.sql`
      select next_block from chain_cursors where chain = 'base'`) as unknown as [{ next_block: string }]
    const head2 = await base.publicClient.getBlockNumber({ cacheTime: 0 })
    expect(BigInt(n2)).toBe(head2 - BigInt(TEST_CONFIRMATIONS) + 1n)
  })

  it('a USDC deposit at an address without gas is topped up, swept, and journaled once', async () => {
    const u = await newUser()
    await mintUsdc(u.address, USDC(40))
    await mine()
    await scanAll()
    const [dep] = await depositRow(u.address, 'USDC')
    if (!dep) throw new Error('not detected')
    expect(await base.publicClient.getBalance({ address: u.address })).toBe(0n)
    const hotBefore = await base.publicClient.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [hot],
    })
    const expenseBefore = await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')

    await untilSwept(dep.id)
    await untilSwept(dep.id) // a re-run after the end changes nothing

    const hotAfter = await base.publicClient.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [hot],
    })
    expect(hotAfter - hotBefore).toBe(USDC(40))
    expect(await depositRow(u.address, 'USDC')).toMatchObject([{ state: 'swept' }])
    const out = await ctx.database.sql<
      {
        purpose: string
        state: string
        tx_hash: string
        gas_used: string
        effective_gas_price: string
        from_address: string
      }[]
    >`
      select purpose, state, tx_hash, gas_used, effective_gas_price, from_address from outbound_txs
      where ref_id = ${dep.id} order by step`
    expect(out.map((o) => [o.purpose, o.state])).toEqual([
      ['gas_topup', 'confirmed'],
      ['sweep', 'confirmed'],
    ])
    // spec 2.1 rule 4: the sweep is signed by the very address the user was shown
    expect(out[1]?.from_address).toBe(u.address)
    const [topup, sweep] = out
    if (!topup || !sweep) throw new Error('missing outbound rows')
    expect((await eventsAbout(sweep.tx_hash)).map((e) => e.type)).toEqual(['deposit_swept', 'gas_spent'])
    expect((await eventsAbout(sweep.tx_hash)).map((e) => e.idempotency_key.split(':')[3])).toEqual(['0', '1'])
    expect((await eventsAbout(topup.tx_hash)).map((e) => [e.type, e.idempotency_key.split(':')[3]])).toEqual([
      ['gas_spent', '0'],
    ])
    const fees = [topup, sweep].reduce((s, o) => s + BigInt(o.gas_used) * BigInt(o.effective_gas_price), 0n)
    // ledger: the user's transit credited once; the platform's gas expense is exactly the fees
    expect(await balanceOf(ctx.database.sql, userTransit(u.id), 'USDC')).toBe(USDC(40))
    expect((await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')) - expenseBefore).toBe(fees)
    expect(await balanceOf(ctx.database.sql, platformGas('base'), 'ETH')).toBe(
      -(await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')),
    )
    expect(await sweepTransfers(u.address)).toHaveLength(1)
  })

  it('a deposit address that already holds gas is swept without a top-up; native ETH sweeps value minus the fee', async () => {
    const u = await newUser()
    // gas the platform recorded (a top-up through the outbox): ETH no record explains is never
    // spent as gas (docs/chains.md "Every deposit is accounted for")
    const outbox = { sql: ctx.database.sql, clients: deps.clients, registry: deps.registry }
    const gas = await sendOnce(outbox, {
      chain: 'base',
      purpose: 'gas_topup',
      refId: randomUUID(),
      signer: deps.gasWallet,
      to: u.address,
      token: 'ETH',
      amountBaseUnits: parseEther('0.001'),
    })
    await confirmOutbound(outbox, gas.id)
    await mintUsdc(u.address, USDC(3))
    const v = await newUser()
    await sendEth(deployer, v.address, parseEther('0.05'))
    await mine()
    await scanAll()
    const [usdcDep] = await depositRow(u.address, 'USDC')
    const [ethDep] = await depositRow(v.address, 'ETH')
    if (!usdcDep || !ethDep) throw new Error('not detected')
    const hotEthBefore = await base.publicClient.getBalance({ address: hot })
    await untilSwept(usdcDep.id)
    await untilSwept(ethDep.id)
    const rows = await ctx.database.sql<{ ref_id: string; purpose: string; amount: string }[]>`
      select ref_id, purpose, amount from outbound_txs where ref_id in (${usdcDep.id}, ${ethDep.id})`
    expect(rows.map((r) => r.purpose).sort()).toEqual(['sweep', 'sweep'])
    const ethSweep = rows.find((r) => r.ref_id === ethDep.id)
    const swept = BigInt(ethSweep?.amount ?? 0)
    expect(swept).toBeLessThan(parseEther('0.05'))
    expect(swept).toBeGreaterThan(parseEther('0.049'))
    expect((await base.publicClient.getBalance({ address: hot })) - hotEthBefore).toBe(swept)
    expect(await balanceOf(ctx.database.sql, userTransit(v.id), 'ETH')).toBe(parseEther('0.05'))
  })

  describe.each([
    ['gas_topup', 'the top-up is recorded, before its broadcast'],
    ['sweep', 'the sweep is recorded, before its broadcast'],
    ['sweep:broadcast', 'the sweep is broadcast, before its confirmation'],
  ] as const)('SIGKILL once %s: %s', (killAt, _when) => {
    it('the restarted worker finds exactly one transfer on chain and one set of events', async () => {
      const u = await newUser()
      await mintUsdc(u.address, USDC(11))
      await mine()
      await scanAll()
      const [dep] = await depositRow(u.address, 'USDC')
      if (!dep) throw new Error('not detected')

      const child: ChildProcess = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, 'fixtures/sweep-child.ts'),
          JSON.stringify({
            env: ctx.env,
            redisUrl: inject('redisUrl'),
            depositId: dep.id,
            killAt,
            chainId: chain.chainId,
            usdc,
          }),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      )
      const signedHash = await new Promise<string>((resolve, reject) => {
        let out = ''
        child.stdout?.on('data', (b: Buffer) => {
          out += b.toString()
          const m = /SIGNED \S+ (0x[0-9a-f]{64})/.exec(out)
          if (m?.[1]) resolve(m[1])
        })
        child.once('exit', (code) => reject(new Error(`child exited (${code}) before signing: ${out}`)))
      })
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))

      const killPurpose = killAt.startsWith('sweep') ? 'sweep' : 'gas_topup'
      const [row] = await ctx.database.sql<{ state: string; tx_hash: string }[]>`
        select state, tx_hash from outbound_txs where ref_id = ${dep.id} and purpose = ${killPurpose}`
      if (killAt === 'sweep:broadcast') {
        // killed between broadcast and confirmation: on chain (mined, not yet final), not journaled
        expect(row).toMatchObject({ state: 'broadcast', tx_hash: signedHash })
        expect(await sweepTransfers(u.address)).toHaveLength(1)
      } else {
        // killed between signing and broadcast: the row is there, the chain has never seen the tx
        expect(row).toMatchObject({ state: 'signed', tx_hash: signedHash })
        await expect(base.publicClient.getTransaction({ hash: signedHash as `0x${string}` })).rejects.toThrow()
        expect(await sweepTransfers(u.address)).toHaveLength(0)
      }
      expect(await depositRow(u.address, 'USDC')).not.toMatchObject([{ state: 'swept' }])

      // the dead worker's lock on this deposit address would expire after LOCK_TTL_MS; expire it now
      await redis.del(`lock:sweep:base:${u.address.toLowerCase()}`)
      await untilSwept(dep.id)

      expect(await sweepTransfers(u.address)).toHaveLength(1)
      const out = await ctx.database.sql<
        { purpose: string; tx_hash: string; gas_used: string; effective_gas_price: string }[]
      >`
        select purpose, tx_hash, gas_used, effective_gas_price from outbound_txs where ref_id = ${dep.id} order by step`
      expect(out.map((o) => o.purpose)).toEqual(['gas_topup', 'sweep'])
      // the very transaction signed before the kill is the one that went out
      expect(out.find((o) => o.purpose === killPurpose)?.tx_hash).toBe(signedHash)
      const events = await ctx.database.sql<{ type: string }[]>`
        select type from ledger_events where idempotency_key = any(${out.flatMap((o) => [
          `tx:base:${o.tx_hash}:0`,
          `tx:base:${o.tx_hash}:1`,
        ])}::text[]) order by type`
      expect(events.map((e) => e.type)).toEqual(['deposit_swept', 'gas_spent', 'gas_spent'])
      expect(await balanceOf(ctx.database.sql, userTransit(u.id), 'USDC')).toBe(USDC(11))
    })
  })

  it('the address book loads incrementally, including a row committed below its mark', async () => {
    const book = new DepositAddressBook()
    const a = await newUser()
    const b = await newUser()
    await syncDepositAddresses(ctx.database.sql, deps.keyring)
    await book.refresh(ctx.database.sql)
    expect(book.lookup(b.address.toLowerCase())).toBe(b.hdIndex)
    // a user whose hd_index is below the highest stored, committed late (sequence order is not
    // commit order), and one above it
    const late = { hdIndex: a.hdIndex - 500, address: deps.keyring.address(a.hdIndex - 500) }
    await ctx.database.sql`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${late.hdIndex})`
    const c = await newUser()
    await syncDepositAddresses(ctx.database.sql, deps.keyring)
    expect(await book.refresh(ctx.database.sql)).toBe(2)
    expect(book.lookup(late.address.toLowerCase())).toBe(late.hdIndex)
    expect(book.lookup(c.address.toLowerCase())).toBe(c.hdIndex)
    expect(await book.refresh(ctx.database.sql)).toBe(0)
  })

  it('each chain is a network of its own: the local overrides give each its id and USDC, two names on one id are refused', () => {
    const local = buildChainRegistry(
      ctx.config,
      configuredChainOverrides({
        localChains: {
          ethereum: { chainId: 901, usdc: '0x5FbDB2315678afecb367f032d93F642f64180aa3' },
          optimism: { chainId: 902, usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512' },
          base: { chainId: 903, usdc },
          arbitrum: { chainId: 904, usdc: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9' },
        },
      }),
    )
    expect(CHAIN_NAMES.map((c) => local.get(c)?.chainId)).toEqual([901, 902, 903, 904])
    expect(local.get('base')?.tokens.find((t) => t.symbol === 'USDC')?.contract).toBe(usdc)
    expect(local.get('base')).toMatchObject({ confirmations: 0, finality: 'depth' })
    // the chain id decides, not the URL: two URLs of one network are still one network, and refused
    const rpcUrls = { ethereum: 'http://a', optimism: 'http://b', base: 'http://c', arbitrum: 'http://d' }
    expect(() => buildChainRegistry({ rpcUrls }, { ethereum: { chainId: 901 }, base: { chainId: 901 } })).toThrow(
      DuplicateChainIdError,
    )
    expect(CHAIN_NAMES.map((c) => buildChainRegistry({ rpcUrls }).get(c)?.chainId)).toEqual([1, 10, 8453, 42161])
  })

  it('the worker runtime wires the scan tick, the sweep fan-out and the per-deposit processor', async () => {
    const u = await newUser()
    await mintUsdc(u.address, USDC(5))
    await mine()
    const prefix = `t-${randomUUID().slice(0, 8)}`
    const ticks = [...depositScanTicks.filter((t) => t.name.endsWith('-base')), depositSweepTick, depositSweepProcessor]
    const connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null })
    // a registry of base alone: the other chains of this test have no node
    const baseOnly: WorkerDeps = {
      ...deps,
      registry: new Map([['base', base.info]]),
      clients: new Map([['base', base]]),
    }
    const rt = await startRuntime({ connection, ticks, consume: ['deposits'], prefix, log: silent, deps: baseOnly })
    try {
      const queue = rt.queues.get('deposits')
      const deadline = Date.now() + 30_000
      for (;;) {
        const [dep] = await depositRow(u.address, 'USDC')
        if (dep?.state === 'swept') break
        if (Date.now() > deadline) throw new Error(`not swept in time (state ${dep?.state})`)
        // run the ticks now instead of waiting for their periods
        await queue?.add('deposits-scan-base', {}, { removeOnComplete: true })
        await queue?.add('deposits-sweep', {}, { removeOnComplete: true })
        await mine()
        await new Promise((r) => setTimeout(r, 300))
      }
      expect(await sweepTransfers(u.address)).toHaveLength(1)
    } finally {
      for (const t of ticks) if (t.everyMs) await rt.queues.get('deposits')?.removeJobScheduler(t.name)
      await rt.close()
      connection.disconnect()
    }
  })
})
