/**
 * The L2 route over CCTP, whole (docs/chains.md "The L2 route", "Rebalancing"): on four local nodes with CCTP's
 * stand-ins, the local attester, the Derive simulator and Postgres. A USDC deposit on each L2 is credited, swept,
 * burned to L1, attested, minted, journaled as `bridged` with its fee, and carried by the L1 deposit to the funding
 * subaccount; a withdrawal on an L2 whose hot wallet is empty is paid after a refill from L1; a crash at each leg
 * resumes the same transactions (one burn, one mint, one `bridged`).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { L2_CHAIN_NAMES } from '@wh/config'
import { addressBookFor, scanChainDeposits, sweepDeposit } from '@wh/deposits'
import { append, balanceOf, platformHot, reserveWithdrawal } from '@wh/ledger'
import {
  bridgeAdapterFor,
  type CctpAdvanceOptions,
  type CctpRunResult,
  checkHotWalletEth,
  L1,
  openTransfer,
  runBridge,
  runCctpRefill,
  runCctpSweep,
  transferById,
} from '@wh/treasury'
import { type ChainName, MESSAGE_TRANSMITTER_V2_ABI, TOKEN_MESSENGER_V2_ABI } from '@wh/wallet'
import { sendWithdrawals, withdrawalSendDeps } from '@wh/withdrawals'
import { type Address, createTestClient, getAddress, type Hex, http, parseEther, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CctpStack, startCctpStack, USDC } from './fixtures/cctp-stack'

const silent = { info() {}, warn() {} }

describe('the L2 route: every L2 reaches the exchange over CCTP, and comes back', () => {
  let s: CctpStack
  let nextHd = 1000

  beforeAll(async () => {
    s = await startCctpStack()
  }, 180_000)
  afterAll(async () => {
    await s?.close()
  })

  const sql = () => s.ctx.database.sql
  /** runs the route until it is done or stops moving (each run goes as far as the chains allow) */
  async function drive(run: () => Promise<CctpRunResult>, rounds = 6): Promise<CctpRunResult> {
    let r = await run()
    for (let i = 0; i < rounds && r.state === 'pending'; i++) r = await run()
    return r
  }
  const sweep = (chain: (typeof L2_CHAIN_NAMES)[number], o: CctpAdvanceOptions = {}) =>
    runCctpSweep(s.cctpDeps(), chain, o)
  const eventsOfType = (type: string) =>
    sql()<{ idempotency_key: string; payload: Record<string, string> }[]>`
      select idempotency_key, payload from ledger_events where type = ${type} order by id`
  const outboxRows = (refId: string) =>
    sql()<{ purpose: string; step: number; chain: string; tx_hash: Hex; state: string }[]>`
      select purpose, step, chain, tx_hash, state from outbound_txs where ref_id = ${refId} order by purpose, step`

  async function depositOn(chain: ChainName, amount: bigint): Promise<{ userId: string }> {
    const hdIndex = nextHd++
    const [u] = await sql()<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})
      returning id`
    await s.mint(chain, s.deps.keyring.address(hdIndex), amount)
    const scanDeps = { ...s.deps, addressBook: addressBookFor(s.deps) }
    for (let i = 0; i < 10 && (await scanChainDeposits(scanDeps, chain)).status === 'scanned'; i++);
    const [d] = await sql()<{ id: string }[]>`select id from deposits where user_id = ${u?.id as string}`
    for (let i = 0; i < 10 && (await sweepDeposit(s.deps, d?.id as string)) !== 'swept'; i++);
    return { userId: u?.id as string }
  }

  it('a USDC deposit on each L2 is swept, burned, attested, minted on L1 and funds the exchange, journaled once', async () => {
    const fundingBefore = s.fundingUsdc()
    const amounts = { optimism: USDC(111), base: USDC(222), arbitrum: USDC(333) } as const
    for (const chain of L2_CHAIN_NAMES) {
      await depositOn(chain, amounts[chain])
      expect(await s.usdcOf(chain, s.hot(chain))).toBe(amounts[chain])
      const r = await drive(() => sweep(chain))
      expect(r).toMatchObject({ state: 'done' })
      if (r.state !== 'done') return
      // one burn on the L2, one mint on L1, from the hot wallets
      expect((await outboxRows(r.id)).map((x) => [x.purpose, x.step, x.chain, x.state])).toEqual([
        ['cctp_burn', 0, chain, 'confirmed'],
        ['cctp_burn', 1, chain, 'confirmed'],
        ['cctp_mint', 0, 'ethereum', 'confirmed'],
      ])
      expect(await s.usdcOf(chain, s.hot(chain))).toBe(0n)
      const row = await transferById(sql(), r.id)
      expect(row).toMatchObject({ state: 'done', reason: 'sweep', min_finality: 1000, mint_tx_hash: r.mintTxHash })
      // fast: Circle's 1.3 bps, within the 5 USDC maximum
      expect(r.fee).toBe((amounts[chain] * 130n + 999_999n) / 1_000_000n)
    }
    const bridged = (await eventsOfType('bridged')).filter((e) => e.payload.toChain === 'ethereum')
    expect(bridged.map((e) => [e.payload.fromChain, e.payload.amount])).toEqual(
      L2_CHAIN_NAMES.map((c) => [c, amounts[c].toString()]),
    )
    for (const e of bridged)
      expect(e.idempotency_key).toMatch(new RegExp(`^tx:${e.payload.fromChain}:0x[0-9a-f]{64}:0$`))
    // the journal moved each amount from the L2's hot account to the L1's, less Circle's fee
    const fees = bridged.reduce((a, e) => a + BigInt(e.payload.feeAmount ?? 0), 0n)
    const total = amounts.optimism + amounts.base + amounts.arbitrum
    expect(await s.usdcOf(L1, s.hot(L1))).toBe(total - fees)
    // the L1 deposit carries it on: into the funding subaccount, credited once the deposit is final
    const l1 = await runBridge(s.deps, bridgeAdapterFor(s.deps), L1)
    expect(l1).toMatchObject({ status: 'bridged', amountBaseUnits: total - fees })
    await s.watcher.poll()
    expect(s.fundingUsdc() - fundingBefore).toBe(total - fees)
    expect(await balanceOf(sql(), platformHot('derive'), 'USDC')).toBe(total - fees)
    // again: nothing left to move, nothing journaled twice
    for (const chain of L2_CHAIN_NAMES) expect(await sweep(chain)).toMatchObject({ state: 'idle' })
    expect((await eventsOfType('bridged')).length).toBe(bridged.length + 1)
  })

  it('a withdrawal on arbitrum, whose hot wallet is empty, is paid after the treasury refills it from L1', async () => {
    await s.mint(L1, s.hot(L1), USDC(500))
    const userId = randomUUID()
    await append(sql(), {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC(80),
      },
      occurredAt: new Date(),
    })
    const destination = getAddress(`0x${randomBytes(20).toString('hex')}`) as Address
    await sql().begin(async (tx) => {
      const w = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount: USDC(60) })
      await tx`update withdrawals set chain = 'arbitrum', destination = ${destination} where id = ${w.withdrawalId}`
    })
    const send = () => sendWithdrawals(withdrawalSendDeps(s.deps, silent))
    await send()
    expect(await s.usdcOf('arbitrum', destination)).toBe(0n)
    // the refill: what the waiting withdrawal lacks, from L1 over CCTP
    const r = await drive(() => runCctpRefill(s.cctpDeps(), 'arbitrum'))
    expect(r).toMatchObject({ state: 'done' })
    expect(await s.usdcOf('arbitrum', s.hot('arbitrum'))).toBeGreaterThanOrEqual(USDC(60))
    // grossed up by Circle's fast fee, so that the 60 the withdrawal lacks arrive
    const [bridged] = (await eventsOfType('bridged')).filter((e) => e.payload.toChain === 'arbitrum')
    expect(bridged?.payload.fromChain).toBe('ethereum')
    expect(BigInt(bridged?.payload.amount ?? 0) - BigInt(bridged?.payload.feeAmount ?? 0)).toBe(USDC(60))
    expect(BigInt(bridged?.payload.feeAmount ?? 0)).toBeGreaterThan(0n)
    // the first send found the hot wallet short and backed off: the backoff over (its due time moved to now), it is sent
    await sql()`update withdrawals set next_attempt_at = now() where user_id = ${userId}`
    for (let i = 0; i < 5 && (await s.usdcOf('arbitrum', destination)) === 0n; i++) await send()
    expect(await s.usdcOf('arbitrum', destination)).toBe(USDC(60))
    const [w] = await sql()<{ state: string }[]>`select state from withdrawals where user_id = ${userId}`
    expect(w?.state).toBe('sent')
    expect(await runCctpRefill(s.cctpDeps(), 'arbitrum')).toMatchObject({ state: 'idle' })
  })

  it('ETH is kept per chain: a hot wallet below HOT_WALLET_ETH_ALERT is named and alerted once an hour, per chain', async () => {
    const anvil = (chain: ChainName) => createTestClient({ mode: 'anvil', transport: http(s.chains[chain].rpcUrl) })
    const eth = async (chain: ChainName) =>
      (await s.deps.clients.get(chain)?.publicClient.getBalance({ address: s.hot(chain) })) as bigint
    const all: ChainName[] = [L1, ...L2_CHAIN_NAMES]
    const before = await Promise.all(all.map(eth))
    const ethAlerts = () => s.alerts.filter((a) => a.text.startsWith('hot wallet ETH low'))
    const seen = ethAlerts().length
    try {
      for (const chain of all) await anvil(chain).setBalance({ address: s.hot(chain), value: parseEther('1') })
      await anvil('optimism').setBalance({ address: s.hot('optimism'), value: parseEther('0.01') })
      expect(await checkHotWalletEth(s.deps)).toEqual(['optimism'])
      expect(ethAlerts().slice(seen)).toEqual([
        { text: expect.any(String), fields: { chain: 'optimism', eth: '0.01', alertBelow: '0.05' } },
      ])
      // still low on the next run: named again, not alerted again within the hour
      expect(await checkHotWalletEth(s.deps)).toEqual(['optimism'])
      expect(ethAlerts().length).toBe(seen + 1)
    } finally {
      for (const [i, chain] of all.entries())
        await anvil(chain).setBalance({ address: s.hot(chain), value: before[i] as bigint })
    }
  })

  async function setAllowanceToZero(chain: ChainName) {
    const c = s.deps.clients.get(chain)
    const hash = await c?.walletClient.writeContract({
      account: s.deps.hotWallet(chain),
      address: s.usdc[chain],
      abi: [
        {
          type: 'function',
          name: 'approve',
          stateMutability: 'nonpayable',
          inputs: [
            { name: 's', type: 'address' },
            { name: 'v', type: 'uint256' },
          ],
          outputs: [{ type: 'bool' }],
        },
      ],
      functionName: 'approve',
      args: [s.cctpDeps().cctp.get(chain)?.tokenMessenger as Address, 0n],
      chain: null,
    })
    await c?.publicClient.waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 20 })
  }

  describe('a crash at each leg resumes the same transactions: one burn, one mint, one bridged', () => {
    const crashes: Array<[string, { signedAt?: number; hook?: keyof CctpAdvanceOptions }]> = [
      ['after the approve is signed, before its broadcast', { signedAt: 1 }],
      ['after the burn is signed, before its broadcast', { signedAt: 2 }],
      ['after the burn is final, before the row says so', { hook: 'afterBurnFinal' }],
      ['after the attestation is read, before it is stored', { hook: 'afterAttested' }],
      ['after the mint is signed, before its broadcast', { signedAt: 3 }],
      ['after the mint is final, before the journal', { hook: 'beforeRecord' }],
    ]
    for (const [name, at] of crashes)
      it(name, async () => {
        const chain = 'base'
        const before = (await eventsOfType('bridged')).length
        await s.mint(chain, s.hot(chain), USDC(50))
        // a fresh allowance each time, so the approve leg is signed too
        await setAllowanceToZero(chain)
        let signed = 0
        const hooks = {
          afterSigned: () => {
            signed++
            if (signed === at.signedAt) throw new Error('killed after signing')
          },
        }
        const crashing = runCctpSweep(s.cctpDeps({ hooks }), chain, at.hook ? { [at.hook]: () => crash() } : {})
        await expect(crashing).rejects.toThrow(/killed/)
        const open = await openTransfer(sql(), chain, L1)
        expect(open).toBeDefined()
        const r = await drive(() => sweep(chain))
        expect(r).toMatchObject({ state: 'done', id: open?.id })
        const rows = await outboxRows(open?.id as string)
        expect(rows.filter((x) => x.purpose === 'cctp_burn' && x.step === 1)).toHaveLength(1)
        expect(rows.filter((x) => x.purpose === 'cctp_mint')).toHaveLength(1)
        // on chain: one DepositForBurn, one MessageReceived for it
        const burn = rows.find((x) => x.purpose === 'cctp_burn' && x.step === 1) as { tx_hash: Hex }
        const mint = rows.find((x) => x.purpose === 'cctp_mint') as { tx_hash: Hex }
        const burnLogs = await s.deps.clients.get(chain)?.publicClient.getTransactionReceipt({ hash: burn.tx_hash })
        expect(
          parseEventLogs({ abi: TOKEN_MESSENGER_V2_ABI, eventName: 'DepositForBurn', logs: burnLogs?.logs ?? [] }),
        ).toHaveLength(1)
        const mintLogs = await s.deps.clients.get(L1)?.publicClient.getTransactionReceipt({ hash: mint.tx_hash })
        expect(
          parseEventLogs({ abi: MESSAGE_TRANSMITTER_V2_ABI, eventName: 'MessageReceived', logs: mintLogs?.logs ?? [] }),
        ).toHaveLength(1)
        expect((await eventsOfType('bridged')).length).toBe(before + 1)
        expect(await s.usdcOf(chain, s.hot(chain))).toBe(0n)
      })

    function crash(): never {
      throw new Error('killed at the hook')
    }
  })

  it('refills to the three L2s at once from one L1 hot wallet: they share its allowance, so one burns at a time, and all three arrive', async () => {
    await s.mint(L1, s.hot(L1), USDC(500))
    await setAllowanceToZero(L1)
    // a withdrawal on each L2 that its hot wallet lacks 40 USDC for: three refills wanted at once
    for (const chain of L2_CHAIN_NAMES) {
      const userId = randomUUID()
      const lacking = (await s.usdcOf(chain, s.hot(chain))) + USDC(40)
      await append(sql(), {
        type: 'deposit_detected',
        payload: {
          userId,
          chain,
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex: 0,
          currency: 'USDC',
          amount: lacking,
        },
        occurredAt: new Date(),
      })
      await sql().begin(async (tx) => {
        const w = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount: lacking })
        await tx`update withdrawals set chain = ${chain}, destination = ${getAddress(`0x${randomBytes(20).toString('hex')}`)}
          where id = ${w.withdrawalId}`
      })
    }
    const before = (await eventsOfType('bridged')).length
    // the three refill runs side by side, round after round, as their ticks run them (each under its own lock)
    const results = new Map<string, CctpRunResult>()
    for (let round = 0; round < 30 && [...results.values()].filter((r) => r.state === 'done').length < 3; round++) {
      const due = L2_CHAIN_NAMES.filter((c) => results.get(c)?.state !== 'done')
      const runs = await Promise.all(due.map((c) => runCctpRefill(s.cctpDeps(), c)))
      for (const [i, c] of due.entries()) results.set(c, runs[i] as CctpRunResult)
    }
    expect(Object.fromEntries(results)).toEqual(
      Object.fromEntries(L2_CHAIN_NAMES.map((c) => [c, expect.objectContaining({ state: 'done' })])),
    )
    const bridged = (await eventsOfType('bridged')).slice(before)
    expect(bridged.map((e) => e.payload.toChain).sort()).toEqual([...L2_CHAIN_NAMES].sort())
    for (const e of bridged) expect(BigInt(e.payload.amount ?? 0) - BigInt(e.payload.feeAmount ?? 0)).toBe(USDC(40))
  })
})
