/**
 * Continuous solvency (docs/solvency.md) on a real chain (anvil, TestUSDC), the Derive simulator
 * and Postgres: assets read where they sit against the journal's liabilities. Money that arrives
 * without a credit shows as a surplus at its address; a journal entry without its money shows as a
 * deficit, confirmed by a second run, alerted once, and stops the platform until an operator clears it.
 */
import { randomBytes } from 'node:crypto'
import { DEFAULT_RETRY } from '@wh/exchange'
import { append, userTransit } from '@wh/ledger'
import { activePlatformStop, clearPlatformStop, listOperatorActions } from '@wh/ops'
import { openDeficits, runSolvency, type SolvencyResult, solvencyDeps } from '@wh/solvency'
import { type LocalChains, localChainsEnv, type RunningChain, startLocalChains, TEST_PRIVATE_KEYS } from '@wh/testkit'
import { type ChainClients, deployTestUsdcs, testUsdcAbi } from '@wh/wallet'
import postgres from 'postgres'
import { type Address, createTestClient, getAddress, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ExchangeStack, startExchangeStack } from './fixtures/exchange-stack'
import { makeOperators, runOpsCli } from './fixtures/operators'

const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('solvency: assets against liabilities, per currency', () => {
  /** one node per chain (each read by the run); the test's money moves on Ethereum's */
  let chains: LocalChains
  let chain: RunningChain
  let stack: ExchangeStack
  let clients: ChainClients
  let usdc: Address
  let nextHd = 7000
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

  beforeAll(async () => {
    chains = await startLocalChains()
    chain = chains.ethereum
    const usdcs = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0])
    usdc = usdcs.ethereum
    stack = await startExchangeStack({
      env: { ...localChainsEnv(chains, usdcs), PLATFORM_STOP_ON_DEFICIT: 'true' },
      // the exchange wallet starts with what the platform bridged: 500 USDC, owed to nobody yet
      wallet: { USDC: '500' },
    })
    clients = stack.deps.clients.get('ethereum') as ChainClients
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
    await chains?.stop()
  })

  const run = (): Promise<SolvencyResult> => runSolvency(solvencyDeps(stack.deps))
  const anvil = () => createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
  const usdcTotals = (r: SolvencyResult) => r.totals.find((t) => t.currency === 'USDC')

  async function mint(to: Address, amount: bigint) {
    const hash = await clients.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
    })
    await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    return hash
  }

  /** A user with a USDC deposit confirmed and credited (not swept yet), as the deposit watch leaves it. */
  async function depositedUser(amount: bigint) {
    const hdIndex = nextHd++
    const address = stack.deps.keyring.address(hdIndex)
    const [user] = await stack.sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})
      returning id`
    const userId = (user as { id: string }).id
    const txHash = await mint(address, amount)
    const block = await clients.publicClient.getBlockNumber()
    // confirmed, as the deposit watch credits it: the chain is read that deep
    await anvil().mine({ blocks: (stack.deps.registry.get('ethereum')?.confirmations ?? 0) + 1 })
    await stack.sql.begin(async (tx) => {
      await tx`insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
        values ('ethereum', ${txHash}, 0, ${block.toString()}, ${userId}, ${hdIndex}, ${address}, 'USDC', ${amount.toString()}, 'detected')`
      await append(tx, {
        type: 'deposit_detected',
        payload: { userId, chain: 'ethereum', txHash, logIndex: 0, currency: 'USDC', amount },
        occurredAt: new Date(),
      })
    })
    return { userId, address }
  }

  it('credited deposits held at their addresses and the exchange wallet: complete, USDC covered, the surplus is what nobody is owed', async () => {
    await depositedUser(USDC(300))
    await depositedUser(USDC(200))
    const r = await run()
    expect(r.errors).toEqual([])
    expect(r.complete).toBe(true)
    expect(r.depositAddresses).toBe(2)
    const t = usdcTotals(r)
    // owed: 500 in transit; held: 500 at the two addresses + the exchange wallet's 500
    expect(t?.liabilities).toBe(USDC(500))
    expect(t?.assets).toBe(USDC(1000))
    expect(t?.surplus).toBe(USDC(500))
    expect(r.deficits).toEqual([])
    expect(r.surpluses).toEqual([])
  })

  it('a transfer to a deposit address that was never credited shows up as a surplus at that address', async () => {
    const { address } = await depositedUser(USDC(40))
    await mint(address, USDC(7)) // nobody credited this
    // ETH arrived as a contract would send it: no transaction to scan
    await anvil().setBalance({ address, value: parseEther('0.3') })
    await anvil().mine({ blocks: (stack.deps.registry.get('ethereum')?.confirmations ?? 0) + 1 })
    const r = await run()
    const here = r.surpluses.filter((s) => s.place === `ethereum:deposit:${address}`)
    expect(here.map((s) => [s.currency, s.amount])).toEqual([
      ['ETH', parseEther('0.3')],
      ['USDC', USDC(7)],
    ])
    expect(usdcTotals(r)?.surplus).toBe(USDC(507))
  })

  it('a journal entry without its money is a deficit: confirmed by a second run, alerted once, the platform stopped until an operator clears it', async () => {
    const { userId } = await depositedUser(USDC(10))
    // injected straight into the journal: 2,000 USDC credited that no chain ever received
    await append(stack.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'ethereum',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC(2000),
      },
      occurredAt: new Date(),
    })
    const alertsBefore = stack.alerts.length

    const first = await run()
    expect(first.deficits.map((d) => [d.currency, d.surplus])).toEqual([['USDC', -USDC(1493)]])
    // one reading may straddle a transfer: nothing decided yet
    expect(first.opened).toEqual([])
    expect(await activePlatformStop(stack.sql)).toBeUndefined()

    const second = await run()
    expect(second.opened.map((e) => [e.currency, e.worst])).toEqual([['USDC', USDC(1493).toString()]])
    expect(second.stopRaised).toBe(true)
    const third = await run()
    expect(third.opened).toEqual([])
    expect(stack.alerts.slice(alertsBefore).map((a) => [a.text, a.fields?.currency])).toEqual([
      ['solvency: the platform holds less than it owes', 'USDC'],
    ])
    const stop = await activePlatformStop(stack.sql)
    expect(stop?.raisedBy).toBe('solvency')

    // the operator clears it, on the record; the episode stays open while the deficit lasts
    expect(await clearPlatformStop(stack.sql, { actor: 'alice', reason: 'injected by the test, explained' })).toBe(1)
    expect(await activePlatformStop(stack.sql)).toBeUndefined()
    expect(await clearPlatformStop(stack.sql, { actor: 'alice', reason: 'again' })).toBe(0)
    const [action] = await listOperatorActions(stack.sql, { subject: 'platform', limit: 1 })
    expect([action?.action, action?.actor]).toEqual(['platform_stop_cleared', 'alice'])
    expect((await openDeficits(stack.sql)).map((e) => e.currency)).toEqual(['USDC'])
    await run()
    expect(await activePlatformStop(stack.sql), 'the same episode does not raise it again').toBeUndefined()

    // the money arrives (the exchange wallet is credited): the next complete run closes the episode
    stack.sim.control.fundWallet(stack.ctx.config.exchange.walletAddress, 'USDC', '2000')
    const healed = await run()
    expect(healed.deficits).toEqual([])
    expect(await openDeficits(stack.sql)).toEqual([])
  })

  it('a run that cannot read the exchange is stored incomplete and decides nothing', async () => {
    stack.sim.control.failNext({
      method: 'private/get_all_portfolios',
      httpStatus: 503,
      count: DEFAULT_RETRY.attempts, // every attempt of the client's retry
    })
    const r = await run()
    expect(r.complete).toBe(false)
    expect(r.errors.map((e) => e.place)).toEqual(['exchange'])
    expect(r.opened).toEqual([])
  })
  it('a balance row changed behind the journal: the run finds it, alerts once, and again only when it changes', async () => {
    const owner = postgres(stack.ctx.ownerUrl, { max: 1, onnotice: () => {} })
    try {
      const { userId } = await depositedUser(USDC(5))
      const clean = await run()
      expect(clean.balanceCheck).toMatchObject({ differenceCount: 0 })
      const alertsBefore = stack.alerts.length
      // as the owner (the application's role cannot: packages/ledger/test/journal.test.ts)
      await owner`update ledger_balances set balance = balance + 1000000 where account = ${userTransit(userId)}`
      const found = await run()
      expect(found.balanceCheck.differences).toEqual([
        { account: userTransit(userId), currency: 'USDC', balance: USDC(6), postings: USDC(5) },
      ])
      await run()
      expect(stack.alerts.slice(alertsBefore).map((a) => a.text)).toEqual([
        'ledger: balance rows differ from the sums of their postings',
      ])
      await owner`update ledger_balances set balance = balance - 1000000 where account = ${userTransit(userId)}`
      expect((await run()).balanceCheck.differenceCount).toBe(0)
    } finally {
      await owner.end()
    }
  })

  it('the ops CLI runs a solvency run, shows it, raises the platform stop, and clears it with four eyes', async () => {
    const env = stack.ctx.env
    const pw = await makeOperators(stack.ctx.ownerUrl, [
      { name: 'bob', role: 'operator' },
      { name: 'carol', role: 'approver' },
    ])
    const ran = await runOpsCli('solvency.ts', ['--run'], env)
    expect(ran.code, ran.text).toBe(0)
    expect(ran.out).toMatchObject({ complete: true, runId: expect.any(String) })
    const shown = await runOpsCli('solvency.ts', ['--show'], env)
    expect(shown.out.run.id).toBe(ran.out.runId)
    expect(shown.out.run.totals.map((t: { currency: string }) => t.currency)).toContain('USDC')

    expect((await runOpsCli('solvency.ts', ['--stop'], env)).code, 'a decision needs its reason').toBe(2)
    const args = (what: string, reason: string) => [what, '--reason', reason, '--operator', 'bob']
    const stopped = await runOpsCli('solvency.ts', args('--stop', 'the exchange reports a hack'), env, `${pw.bob}\n`)
    expect(stopped.out).toMatchObject({ stopped: true, alreadyDone: false })
    expect((await activePlatformStop(stack.sql))?.raisedBy).toBe('operator')
    const proposed = await runOpsCli('solvency.ts', args('--clear', 'funds accounted for'), env, `${pw.bob}\n`)
    expect(proposed.out).toMatchObject({ proposal: { action: 'platform_stop_clear', status: 'open' } })
    expect(await activePlatformStop(stack.sql)).toBeDefined()
    const approved = await runOpsCli(
      'proposals.ts',
      [proposed.out.proposal.id, '--approve', '--operator', 'carol'],
      env,
      `${pw.carol}\n`,
    )
    expect(approved.out).toMatchObject({ executed: true })
    expect(await activePlatformStop(stack.sql)).toBeUndefined()
    const actions = await listOperatorActions(stack.sql, { subject: 'platform', limit: 2 })
    expect(actions.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['platform_stop_cleared', 'bob', 'funds accounted for'],
      ['platform_stop_raised', 'bob', 'the exchange reports a hack'],
    ])
    expect(actions[0]?.details).toMatchObject({ approvedBy: ['carol'] })
  }, 120_000)
})
