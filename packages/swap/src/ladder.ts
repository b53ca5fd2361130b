/**
 * The ladder executor (docs/swaps.md "The ladder"): one swap for a user's subaccount, walked
 * through EPSILON_LADDER_BPS until it executes, the ladder is exhausted or LADDER_DEADLINE_MS has
 * passed. Refused before any transaction when the quote is further than SANITY_THRESHOLD_BPS from
 * the index price or when the swap wallet holds less than SWAP_GAS_FLOOR_WEI.
 *
 * Crash safety: the progress (run, step) is a `swaps` row, and each step's transaction is the
 * outbox row (purpose `swap`, ref `{swapId}:{run}`, step). A call for a swap whose current step
 * already has a transaction never signs another one for that step: it re-broadcasts or reads that
 * transaction, records its outcome (the journal's keys make a repeat a no-op) and only then moves
 * on. The next step is sent only once the previous one is final, so two steps can never both execute.
 */
import {
  EPSILON_LADDER_BPS,
  LADDER_DEADLINE_MS,
  SANITY_THRESHOLD_BPS,
  SWAP_GAS_FLOOR_WEI,
  SWAP_RETRY_STALE_AFTER_MS,
} from '@wh/config'
import type { AppError, Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  type Alerter,
  type ChainName,
  confirmOutbound,
  feePaidWei,
  findOutbound,
  type OutboundCall,
  type OutboundRecord,
  type OutboxDeps,
  sendOnce,
} from '@wh/wallet'
import { BaseError, ExecutionRevertedError, erc20Abi, getAddress, type Hex, type LocalAccount } from 'viem'
import type { ApprovalCall, SwapAdapter, SwapLeg } from './adapter'
import {
  InvalidSwapRequestError,
  SwapApprovalFailedError,
  SwapGasFloorError,
  SwapMismatchError,
  SwapSanityError,
  SwapWalletBalanceError,
} from './errors'
import { deviationBps, exceedsDeviation, minAmountOut, type PriceRatio, toPriceRatio } from './math'
import { createOrLoadSwap, loadSwap, type StoredSwap, updateSwapIf } from './store'

/** The native currency gas is paid in, on every chain of the registry. */
export const GAS_CURRENCY = 'ETH'
/** How often a sent step's receipt is read, and how many times before the call returns 'pending'. */
export const RECEIPT_POLL_MS = 250
export const MAX_RECEIPT_POLLS = 120

export type SwapOutcome =
  | 'executed'
  | 'exhausted'
  | 'deadline'
  | 'refused_sanity'
  | 'refused_gas'
  /** a retry whose first attempt is older than SWAP_RETRY_STALE_AFTER_MS (an alert went out) */
  | 'abandoned'
  /** a step's transaction is not final yet (not mined, or not confirmations deep): call again */
  | 'pending'

export interface SwapRequest {
  /** the caller's id of this swap (uuid): a second call with it continues or retries the same swap */
  readonly swapId: string
  readonly userId: string
  readonly subaccountId: string
  readonly chain: ChainName
  /** ledger currency sold and bought (USDC, ETH) */
  readonly sell: string
  readonly buy: string
  /** base units of `sell` */
  readonly amountIn: bigint
  /** whole units of `buy` per whole unit of `sell`: a decimal string or an exact ratio, never a float */
  readonly indexPrice: string | PriceRatio
}

/** What one step quoted and required, handed to `hooks.beforeSend`. */
export interface LadderStep {
  readonly swapId: string
  readonly run: number
  readonly step: number
  readonly epsilonBps: number
  readonly quote: bigint
  readonly minAmountOut: bigint
}

export interface StepReport {
  readonly step: number
  readonly epsilonBps: number
  /** executed / reverted on chain; not_sent: the node refused it at estimation (it would revert);
   * dropped: its nonce went to another transaction; in_flight: not final when this call returned */
  readonly status: 'executed' | 'reverted' | 'not_sent' | 'dropped' | 'in_flight'
  readonly quote?: bigint
  readonly minAmountOut?: bigint
  readonly txHash?: Hex
  readonly gasWei?: bigint
  /** wall time of the step in this call (quote to final receipt) */
  readonly durationMs: number
}

export interface SwapResult {
  readonly swapId: string
  readonly outcome: SwapOutcome
  readonly run: number
  readonly steps: readonly StepReport[]
  readonly txHash?: string
  readonly sellAmount?: bigint
  readonly buyAmount?: bigint
  /** the typed refusal (SwapSanityError, SwapGasFloorError) */
  readonly error?: AppError
}

export interface SwapDeps {
  readonly sql: Sql
  /** the wallet's outbox dependencies (the swap's transactions share its table and nonce lock) */
  readonly outbox: OutboxDeps
  readonly adapter: SwapAdapter
  /** SWAP_WALLET_PRIVATE_KEY's account: signs, pays amountIn and gas, receives the output */
  readonly swapWallet: LocalAccount
  readonly clock: Clock
  readonly alerter: Pick<Alerter, 'alert'>
  readonly hooks?: {
    /** after the quote and before the step's transaction is signed (tests move the pool here) */
    beforeSend?: (step: LadderStep) => Promise<void> | void
  }
  readonly receiptPollMs?: number
  readonly maxReceiptPolls?: number
  readonly sleep?: (ms: number) => Promise<void>
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The outbox row's `token` (bookkeeping: which money the call moves) for a ledger currency. */
function outboxToken(currency: string): OutboundCall['token'] {
  if (currency !== 'ETH' && currency !== 'USDC')
    throw new InvalidSwapRequestError('the outbox books only ETH and USDC', { currency })
  return currency
}

function validate(req: SwapRequest): void {
  if (req.amountIn <= 0n) throw new InvalidSwapRequestError('amountIn must be positive', { swapId: req.swapId })
  if (req.sell === req.buy) throw new InvalidSwapRequestError('a swap needs two currencies', { currency: req.sell })
  outboxToken(req.sell)
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(req.swapId))
    throw new InvalidSwapRequestError('swapId must be a lowercase uuid', { swapId: req.swapId })
}

function assertSameRequest(s: StoredSwap, req: SwapRequest): void {
  const pairs: [string, unknown, unknown][] = [
    ['userId', s.userId, req.userId],
    ['subaccountId', s.subaccountId, req.subaccountId],
    ['chain', s.chain, req.chain],
    ['sell', s.sellCurrency, req.sell],
    ['buy', s.buyCurrency, req.buy],
    ['amountIn', s.amountIn, req.amountIn],
  ]
  for (const [field, stored, asked] of pairs) if (stored !== asked) throw new SwapMismatchError(req.swapId, field)
}

function isStale(s: StoredSwap, now: Date): boolean {
  return now.getTime() - s.firstAttemptAt.getTime() > SWAP_RETRY_STALE_AFTER_MS
}

/** The node refused the call at estimation with a revert: sending it would only burn gas. */
function isExecutionRevert(e: unknown): boolean {
  return e instanceof BaseError && e.walk((x) => x instanceof ExecutionRevertedError) !== null
}

function resultOf(s: StoredSwap, outcome: SwapOutcome, steps: StepReport[], error?: AppError): SwapResult {
  return {
    swapId: s.id,
    outcome,
    run: s.run,
    steps,
    ...(s.txHash !== null && outcome === 'executed' ? { txHash: s.txHash } : {}),
    ...(s.sellAmount !== null && outcome === 'executed' ? { sellAmount: s.sellAmount } : {}),
    ...(s.buyAmount !== null && outcome === 'executed' ? { buyAmount: s.buyAmount } : {}),
    ...(error ? { error } : {}),
  }
}

/** Polls the outbox row until it is final (confirmed or failed), at most maxReceiptPolls times. */
async function waitFinal(deps: SwapDeps, record: OutboundRecord): Promise<OutboundRecord | undefined> {
  const polls = deps.maxReceiptPolls ?? MAX_RECEIPT_POLLS
  const sleep = deps.sleep ?? defaultSleep
  for (let i = 0; i < polls; i++) {
    const r = await confirmOutbound(deps.outbox, record.id)
    if (r.state === 'confirmed' || r.state === 'failed') return r
    await sleep(deps.receiptPollMs ?? RECEIPT_POLL_MS)
  }
  return undefined
}

/** An approval's gas, platform overhead (`gas_spent` slot 0, no user); keyed by its hash, so once. */
async function journalApprovalGas(deps: SwapDeps, chain: ChainName, final: OutboundRecord): Promise<void> {
  if (final.gasUsed === undefined) return
  await appendBatch(deps.sql, [
    {
      type: 'gas_spent',
      payload: { chain, txHash: final.txHash, slot: 0, currency: GAS_CURRENCY, amount: feePaidWei(final) },
      occurredAt: deps.clock.now(),
    },
  ])
}

/**
 * The allowances the swap still needs, each through the outbox (purpose `swap_approval`, ref
 * `{chain}:{spender}:{token}`; a new step only when the previous approval is final and the
 * allowance is short again). Its gas is platform overhead: `gas_spent` at slot 0, no user.
 * Returns false when an approval is not final yet.
 */
async function ensureApprovals(deps: SwapDeps, chain: ChainName, approvals: readonly ApprovalCall[]): Promise<boolean> {
  // An approval a dead worker broadcast may be mined by now, so the adapter no longer asks for it:
  // its row is settled here whatever `approvals` says, or its gas would never be journaled
  // (test/fault/swap-approval.test.ts). Reverted ones only get their gas: the allowance check asks again.
  const open = await deps.sql<{ id: string }[]>`
    select id from outbound_txs where purpose = 'swap_approval' and chain = ${chain}
      and from_address = ${getAddress(deps.swapWallet.address)} and state in ('signed', 'broadcast')`
  for (const row of open) {
    const final = await waitFinal(deps, { id: row.id } as OutboundRecord)
    if (!final) return false
    await journalApprovalGas(deps, chain, final)
  }
  for (const a of approvals) {
    const refId = `${chain}:${a.spender.toLowerCase()}:${a.token.address.toLowerCase()}`
    const [last] = await deps.sql<{ step: number; state: string }[]>`
      select step, state from outbound_txs where purpose = 'swap_approval' and ref_id = ${refId}
      order by step desc limit 1`
    const step =
      last === undefined ? 0 : last.state === 'confirmed' || last.state === 'failed' ? last.step + 1 : last.step
    const sent = await sendOnce(deps.outbox, {
      kind: 'call',
      chain,
      purpose: 'swap_approval',
      refId,
      step,
      signer: deps.swapWallet,
      to: a.to,
      data: a.data,
      valueWei: a.value,
      token: outboxToken(a.token.currency),
      amountBaseUnits: a.allowance,
    })
    const final = await waitFinal(deps, sent)
    if (!final) return false
    await journalApprovalGas(deps, chain, final)
    // a reverted approval is not retried in this call (no loop of burnt gas): the caller's retry sends the next one
    if (final.state !== 'confirmed')
      throw new SwapApprovalFailedError({ chain, txHash: final.txHash, token: a.token.currency, spender: a.spender })
  }
  return true
}

/**
 * Runs (or continues) the swap `req.swapId` and returns how it ended. Safe to call again with the
 * same request at any time, after a crash or on a second worker: it continues the stored attempt.
 * A call for a swap that ended without executing (exhausted, deadline, refused) starts a new run of
 * the ladder, unless its first attempt is older than SWAP_RETRY_STALE_AFTER_MS: then it is
 * abandoned with an alert. An executed swap answers its stored result and sends nothing.
 *
 * @example
 *   const r = await executeSwap(deps, { swapId, userId, subaccountId, chain: 'base', sell: 'USDC', buy: 'ETH',
 *     amountIn: 3_000_000_000n, indexPrice: { num: 1n, den: 3000n } })
 *   if (r.outcome === 'executed') log.info({ bought: r.buyAmount }, 'converted')
 */
export async function executeSwap(deps: SwapDeps, req: SwapRequest): Promise<SwapResult> {
  validate(req)
  const price = toPriceRatio(req.indexPrice)
  const leg: SwapLeg = { chain: req.chain, sell: req.sell, buy: req.buy, amountIn: req.amountIn }
  const tokenIn = deps.adapter.token(req.chain, req.sell)
  const tokenOut = deps.adapter.token(req.chain, req.buy)
  const maybeClients = deps.outbox.clients.get(req.chain)
  if (!maybeClients) throw new InvalidSwapRequestError('no clients for this chain', { chain: req.chain })
  const clients = maybeClients
  const wallet = getAddress(deps.swapWallet.address)
  const steps: StepReport[] = []

  let { swap } = await createOrLoadSwap(
    deps.sql,
    {
      id: req.swapId,
      userId: req.userId,
      subaccountId: req.subaccountId,
      chain: req.chain,
      sellCurrency: req.sell,
      buyCurrency: req.buy,
      amountIn: req.amountIn,
      indexPrice: price,
    },
    deps.clock.now(),
  )
  assertSameRequest(swap, req)

  const reload = async () => (await loadSwap(deps.sql, req.swapId)) as StoredSwap
  const abandon = async (s: StoredSwap): Promise<SwapResult> => {
    const done = await updateSwapIf(deps.sql, s, { state: 'abandoned', lastError: 'retry older than the stale limit' })
    if (!done) return run(await reload())
    await deps.alerter.alert('swap abandoned: its first attempt is older than SWAP_RETRY_STALE_AFTER_MS', {
      swapId: s.id,
      userId: s.userId,
      subaccountId: s.subaccountId,
      chain: s.chain,
      sell: s.sellCurrency,
      buy: s.buyCurrency,
      amountIn: s.amountIn,
      firstAttemptAt: s.firstAttemptAt.toISOString(),
      runs: s.run + 1,
    })
    return resultOf(done, 'abandoned', steps)
  }
  const finish = async (
    s: StoredSwap,
    outcome: Exclude<SwapOutcome, 'executed' | 'abandoned' | 'pending'>,
    error?: AppError,
  ) => {
    const done = await updateSwapIf(deps.sql, s, { state: outcome, lastError: error?.message ?? null })
    if (!done) return run(await reload())
    return resultOf(done, outcome, steps, error)
  }

  async function run(s: StoredSwap): Promise<SwapResult> {
    swap = s
    if (swap.state === 'executed' || swap.state === 'abandoned') return resultOf(swap, swap.state, steps)
    if (swap.state !== 'running') {
      // a retry of a swap that ended without executing: a fresh run of the ladder, unless stale
      if (isStale(swap, deps.clock.now())) return abandon(swap)
      const next = await updateSwapIf(deps.sql, swap, {
        state: 'running',
        run: swap.run + 1,
        step: 0,
        runStartedAt: deps.clock.now(),
        indexPrice: price,
        lastError: null,
      })
      return run(next ?? (await reload()))
    }
    // a bound on the loop: every pass either returns or moves `step` forward
    for (let pass = 0; pass <= EPSILON_LADDER_BPS.length + 1; pass++) {
      const refId = `${swap.id}:${swap.run}`
      const epsilonBps = EPSILON_LADDER_BPS[swap.step]
      const started = performance.now()
      let record = (await findOutbound(deps.outbox, { purpose: 'swap', refId, step: swap.step }))?.record
      let quoted: { quote: bigint; min: bigint } | undefined
      if (!record) {
        const now = deps.clock.now()
        // nothing in flight for this step: the only moment the swap may stop without losing track of money
        if (isStale(swap, now)) return abandon(swap)
        if (epsilonBps === undefined) return finish(swap, 'exhausted')
        if (now.getTime() - swap.runStartedAt.getTime() >= LADDER_DEADLINE_MS) return finish(swap, 'deadline')
        const balanceWei = await clients.publicClient.getBalance({ address: wallet })
        if (balanceWei < SWAP_GAS_FLOOR_WEI)
          return finish(
            swap,
            'refused_gas',
            new SwapGasFloorError({ chain: req.chain, wallet, balanceWei, floorWei: SWAP_GAS_FLOOR_WEI }),
          )
        const held = await clients.publicClient.readContract({
          address: tokenIn.address,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [wallet],
        })
        // without the tokens every step would fail at estimation and the swap end as a misleading 'exhausted'
        if (held < req.amountIn)
          throw new SwapWalletBalanceError({
            chain: req.chain,
            wallet,
            currency: req.sell,
            balance: held,
            needed: req.amountIn,
          })
        const quote = await deps.adapter.quote(leg)
        if (
          exceedsDeviation(
            quote,
            req.amountIn,
            swap.indexPrice,
            tokenIn.decimals,
            tokenOut.decimals,
            SANITY_THRESHOLD_BPS,
          )
        )
          return finish(
            swap,
            'refused_sanity',
            new SwapSanityError({
              swapId: swap.id,
              quote,
              deviationBps: deviationBps(quote, req.amountIn, swap.indexPrice, tokenIn.decimals, tokenOut.decimals),
              thresholdBps: SANITY_THRESHOLD_BPS,
            }),
          )
        const min = minAmountOut(quote, epsilonBps)
        quoted = { quote, min }
        const head = await clients.publicClient.getBlock({ blockTag: 'latest' })
        const built = await deps.adapter.buildSwap({
          ...leg,
          minAmountOut: min,
          owner: wallet,
          recipient: wallet,
          // the venue refuses the transaction once the ladder's window is over (a re-broadcast after a long outage)
          deadlineSec: head.timestamp + BigInt(Math.ceil(LADDER_DEADLINE_MS / 1000)),
        })
        if (!(await ensureApprovals(deps, req.chain, built.approvals))) return resultOf(swap, 'pending', steps)
        await deps.hooks?.beforeSend?.({
          swapId: swap.id,
          run: swap.run,
          step: swap.step,
          epsilonBps,
          quote,
          minAmountOut: min,
        })
        try {
          // estimated under the sender's lock before anything is stored: a revert there leaves no row
          record = await sendOnce(deps.outbox, {
            kind: 'call',
            chain: req.chain,
            purpose: 'swap',
            refId,
            step: swap.step,
            signer: deps.swapWallet,
            to: built.swap.to,
            data: built.swap.data,
            valueWei: built.swap.value,
            token: outboxToken(req.sell),
            amountBaseUnits: req.amountIn,
          })
        } catch (e) {
          if (!isExecutionRevert(e)) throw e
          // the pool moved between the quote and the signing: nothing sent, nothing burnt, next ε
          steps.push({
            step: swap.step,
            epsilonBps,
            status: 'not_sent',
            quote,
            minAmountOut: min,
            durationMs: performance.now() - started,
          })
          swap = (await updateSwapIf(deps.sql, swap, { step: swap.step + 1 })) ?? (await reload())
          if (swap.state !== 'running') return run(swap)
          continue
        }
      }
      const stepEps = epsilonBps ?? 0
      const final = await waitFinal(deps, record)
      const base = {
        step: swap.step,
        epsilonBps: stepEps,
        txHash: record.txHash,
        ...(quoted ? { quote: quoted.quote, minAmountOut: quoted.min } : {}),
      }
      if (!final) {
        steps.push({ ...base, status: 'in_flight', durationMs: performance.now() - started })
        return resultOf(swap, 'pending', steps)
      }
      const occurredAt = deps.clock.now()
      if (final.state === 'confirmed') {
        const receipt = await clients.publicClient.getTransactionReceipt({ hash: final.txHash })
        const outcome = deps.adapter.parseOutcome({ ...leg, owner: wallet, recipient: wallet, receipt })
        if (outcome.status !== 'executed') throw new Error(`outbox says confirmed, receipt says ${receipt.status}`)
        const gasWei = feePaidWei(final)
        const events: EventInput[] = [
          {
            type: 'swap_executed',
            payload: {
              userId: req.userId,
              subaccountId: req.subaccountId,
              chain: req.chain,
              txHash: final.txHash,
              sellCurrency: req.sell,
              sellAmount: outcome.sellAmount,
              buyCurrency: req.buy,
              buyAmount: outcome.buyAmount,
            },
            occurredAt,
          },
          {
            type: 'gas_spent',
            payload: {
              chain: req.chain,
              txHash: final.txHash,
              slot: 1,
              currency: GAS_CURRENCY,
              amount: gasWei,
              userId: req.userId,
            },
            occurredAt,
          },
        ]
        const done = await deps.sql.begin(async (tx) => {
          await appendBatch(tx, events)
          return updateSwapIf(tx, swap, {
            state: 'executed',
            txHash: final.txHash,
            sellAmount: outcome.sellAmount,
            buyAmount: outcome.buyAmount,
            lastError: null,
          })
        })
        steps.push({ ...base, status: 'executed', gasWei, durationMs: performance.now() - started })
        return resultOf(done ?? (await reload()), 'executed', steps)
      }
      // failed: reverted on chain (it burnt gas), or its nonce went to another transaction (it never will be mined)
      const reverted = final.gasUsed !== undefined
      const gasWei = reverted ? feePaidWei(final) : undefined
      const events: EventInput[] = reverted
        ? [
            {
              type: 'swap_reverted',
              payload: {
                chain: req.chain,
                txHash: final.txHash,
                userId: req.userId,
                subaccountId: req.subaccountId,
                reason: `reverted on chain at ladder step ${swap.step} (ε ${stepEps} bps)`,
              },
              occurredAt,
            },
            {
              type: 'gas_spent',
              payload: {
                chain: req.chain,
                txHash: final.txHash,
                slot: 1,
                currency: GAS_CURRENCY,
                amount: gasWei!,
                userId: req.userId,
              },
              occurredAt,
            },
          ]
        : []
      const current = swap
      const moved = await deps.sql.begin(async (tx) => {
        await appendBatch(tx, events)
        return updateSwapIf(tx, current, { step: current.step + 1 })
      })
      steps.push({
        ...base,
        status: reverted ? 'reverted' : 'dropped',
        ...(gasWei !== undefined ? { gasWei } : {}),
        durationMs: performance.now() - started,
      })
      swap = moved ?? (await reload())
      if (swap.state !== 'running') return run(swap)
    }
    throw new Error(`swap ${swap.id}: the ladder loop passed its bound`)
  }

  return run(swap)
}
