/**
 * The ladder executor (docs/swaps.md "The ladder"): one swap for a user's subaccount, walked
 * through EPSILON_LADDER_BPS until it executes, the ladder is exhausted or LADDER_DEADLINE_MS has
 * passed. Refused before any transaction when the quote is further than SANITY_THRESHOLD_BPS from
 * the index price or when the swap wallet holds less than SWAP_GAS_FLOOR_WEI.
 *
 * The swap is a state machine over its stored row (`swaps.state`): `running` takes one step of the
 * ladder per transition (send the step's transaction when none is in flight, then settle it);
 * an ended run (`exhausted`, `deadline`, `refused_*`) asked again starts a new run or is abandoned
 * when stale; `executed` and `abandoned` are final. Each transition is one conditional update of
 * the row (with its journal events in the same transaction), so two workers never both move it.
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
import type { AppError } from '@wh/core'
import { appendBatch } from '@wh/ledger'
import { feePaidWei, findOutbound, type OutboundRecord, type OutboxDeps, sendOnce } from '@wh/wallet'
import { type Address, erc20Abi, getAddress } from 'viem'
import type { SwapLeg, SwapToken } from './adapter'
import {
  InvalidSwapRequestError,
  SwapGasFloorError,
  SwapMismatchError,
  SwapSanityError,
  SwapWalletBalanceError,
} from './errors'
import {
  ensureApprovals,
  executedEvents,
  isExecutionRevert,
  outboxToken,
  revertedEvents,
  waitFinal,
} from './ladder-chain'
import type { StepReport, SwapDeps, SwapOutcome, SwapRequest, SwapResult } from './ladder-types'
import { deviationBps, exceedsDeviation, minAmountOut, type PriceRatio, toPriceRatio } from './math'
import { createOrLoadSwap, loadSwap, type StoredSwap, updateSwapIf } from './store'

export { creditedAmount, GAS_CURRENCY, MAX_RECEIPT_POLLS, RECEIPT_POLL_MS } from './ladder-chain'

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

/** What a call works with that does not change while it runs; `steps` gathers its report. */
interface Ctx {
  readonly deps: SwapDeps
  readonly req: SwapRequest
  readonly price: PriceRatio
  readonly leg: SwapLeg
  readonly tokenIn: SwapToken
  readonly tokenOut: SwapToken
  readonly publicClient: NonNullable<ReturnType<OutboxDeps['clients']['get']>>['publicClient']
  readonly wallet: Address
  readonly steps: StepReport[]
}

/** A transition's answer: the call ends with `done`, or the swap is now `next` (as stored). */
type Transition = { readonly done: SwapResult } | { readonly next: StoredSwap }

/** An ended swap answers once; each other transition moves `step` or `run` forward or ends. */
const MAX_TRANSITIONS = 4 * (EPSILON_LADDER_BPS.length + 2)

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
  const clients = deps.outbox.clients.get(req.chain)
  if (!clients) throw new InvalidSwapRequestError('no clients for this chain', { chain: req.chain })
  const ctx: Ctx = {
    deps,
    req,
    price: toPriceRatio(req.indexPrice),
    leg: { chain: req.chain, sell: req.sell, buy: req.buy, amountIn: req.amountIn },
    tokenIn: deps.adapter.token(req.chain, req.sell),
    tokenOut: deps.adapter.token(req.chain, req.buy),
    publicClient: clients.publicClient,
    wallet: getAddress(deps.swapWallet.address),
    steps: [],
  }
  const { swap } = await createOrLoadSwap(
    deps.sql,
    {
      id: req.swapId,
      userId: req.userId,
      subaccountId: req.subaccountId,
      chain: req.chain,
      sellCurrency: req.sell,
      buyCurrency: req.buy,
      amountIn: req.amountIn,
      indexPrice: ctx.price,
    },
    deps.clock.now(),
  )
  assertSameRequest(swap, req)
  let current = swap
  for (let i = 0; i < MAX_TRANSITIONS; i++) {
    const t = await transition(ctx, current)
    if ('done' in t) return t.done
    current = t.next
  }
  throw new Error(`swap ${current.id}: more than ${MAX_TRANSITIONS} transitions in one call`)
}

/** One transition from the stored state. */
function transition(ctx: Ctx, s: StoredSwap): Promise<Transition> {
  switch (s.state) {
    case 'executed':
    case 'abandoned':
      return Promise.resolve({ done: resultOf(s, s.state, ctx.steps) })
    case 'running':
      return takeStep(ctx, s)
    default:
      return restart(ctx, s)
  }
}

const reload = async (ctx: Ctx): Promise<StoredSwap> => (await loadSwap(ctx.deps.sql, ctx.req.swapId)) as StoredSwap

/** A swap that ended without executing, asked again: a fresh run of the ladder, unless stale. */
async function restart(ctx: Ctx, s: StoredSwap): Promise<Transition> {
  const now = ctx.deps.clock.now()
  if (isStale(s, now)) return abandon(ctx, s)
  const next = await updateSwapIf(ctx.deps.sql, s, {
    state: 'running',
    run: s.run + 1,
    step: 0,
    runStartedAt: now,
    indexPrice: ctx.price,
    lastError: null,
  })
  return { next: next ?? (await reload(ctx)) }
}

/** running → abandoned, with an alert (once: the update is conditional on the row's state). */
async function abandon(ctx: Ctx, s: StoredSwap): Promise<Transition> {
  const done = await updateSwapIf(ctx.deps.sql, s, {
    state: 'abandoned',
    lastError: 'retry older than the stale limit',
  })
  if (!done) return { next: await reload(ctx) }
  await ctx.deps.alerter.alert('swap abandoned: its first attempt is older than SWAP_RETRY_STALE_AFTER_MS', {
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
  return { done: resultOf(done, 'abandoned', ctx.steps) }
}

/** running → an ended run (exhausted, deadline, refused_*). */
async function finish(
  ctx: Ctx,
  s: StoredSwap,
  outcome: Exclude<SwapOutcome, 'executed' | 'abandoned' | 'pending'>,
  error?: AppError,
): Promise<Transition> {
  const done = await updateSwapIf(ctx.deps.sql, s, { state: outcome, lastError: error?.message ?? null })
  if (!done) return { next: await reload(ctx) }
  return { done: resultOf(done, outcome, ctx.steps, error) }
}

/** running: the current step, sent when nothing is in flight for it, then settled. */
async function takeStep(ctx: Ctx, s: StoredSwap): Promise<Transition> {
  const started = performance.now()
  const refId = `${s.id}:${s.run}`
  const found = (await findOutbound(ctx.deps.outbox, { purpose: 'swap', refId, step: s.step }))?.record
  if (found) return settleStep(ctx, s, found, undefined, started)
  const sent = await sendStep(ctx, s, refId, started)
  return 'record' in sent ? settleStep(ctx, s, sent.record, sent.quoted, started) : sent
}

interface Quoted {
  readonly quote: bigint
  readonly min: bigint
}

/** The checks before a step is quoted and its answer: the quote, or the run ends refused. */
async function quoteStep(ctx: Ctx, s: StoredSwap): Promise<Transition | { quote: bigint }> {
  const { req, wallet, publicClient } = ctx
  const balanceWei = await publicClient.getBalance({ address: wallet })
  if (balanceWei < SWAP_GAS_FLOOR_WEI) {
    const error = new SwapGasFloorError({ chain: req.chain, wallet, balanceWei, floorWei: SWAP_GAS_FLOOR_WEI })
    return finish(ctx, s, 'refused_gas', error)
  }
  const held = await publicClient.readContract({
    address: ctx.tokenIn.address,
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
  const quote = await ctx.deps.adapter.quote(ctx.leg)
  const decimals = [ctx.tokenIn.decimals, ctx.tokenOut.decimals] as const
  if (!exceedsDeviation(quote, req.amountIn, s.indexPrice, ...decimals, SANITY_THRESHOLD_BPS)) return { quote }
  const error = new SwapSanityError({
    swapId: s.id,
    quote,
    deviationBps: deviationBps(quote, req.amountIn, s.indexPrice, ...decimals),
    thresholdBps: SANITY_THRESHOLD_BPS,
  })
  return finish(ctx, s, 'refused_sanity', error)
}

/**
 * Nothing in flight for this step: the only moment the swap may stop without losing track of
 * money (stale, ladder exhausted, deadline, refused). Otherwise the step is quoted, its
 * approvals made and its transaction sent; a revert at estimation moves to the next ε.
 */
async function sendStep(
  ctx: Ctx,
  s: StoredSwap,
  refId: string,
  started: number,
): Promise<Transition | { record: OutboundRecord; quoted: Quoted }> {
  const { deps, req, wallet } = ctx
  const now = deps.clock.now()
  if (isStale(s, now)) return abandon(ctx, s)
  const epsilonBps = EPSILON_LADDER_BPS[s.step]
  if (epsilonBps === undefined) return finish(ctx, s, 'exhausted')
  if (now.getTime() - s.runStartedAt.getTime() >= LADDER_DEADLINE_MS) return finish(ctx, s, 'deadline')
  const quoted = await quoteStep(ctx, s)
  if (!('quote' in quoted)) return quoted
  const { quote } = quoted
  const min = minAmountOut(quote, epsilonBps)
  const head = await ctx.publicClient.getBlock({ blockTag: 'latest' })
  const built = await deps.adapter.buildSwap({
    ...ctx.leg,
    minAmountOut: min,
    owner: wallet,
    recipient: wallet,
    // the venue refuses the transaction once the ladder's window is over (a re-broadcast after a long outage)
    deadlineSec: head.timestamp + BigInt(Math.ceil(LADDER_DEADLINE_MS / 1000)),
  })
  if (!(await ensureApprovals(deps, req.chain, built.approvals))) return { done: resultOf(s, 'pending', ctx.steps) }
  await deps.hooks?.beforeSend?.({ swapId: s.id, run: s.run, step: s.step, epsilonBps, quote, minAmountOut: min })
  try {
    // estimated under the sender's lock before anything is stored: a revert there leaves no row
    const record = await sendOnce(deps.outbox, {
      kind: 'call',
      chain: req.chain,
      purpose: 'swap',
      refId,
      step: s.step,
      signer: deps.swapWallet,
      to: built.swap.to,
      data: built.swap.data,
      valueWei: built.swap.value,
      token: outboxToken(req.sell),
      amountBaseUnits: req.amountIn,
    })
    return { record, quoted: { quote, min } }
  } catch (e) {
    if (!isExecutionRevert(e)) throw e
    // the pool moved between the quote and the signing: nothing sent, nothing burnt, next ε
    const durationMs = performance.now() - started
    ctx.steps.push({ step: s.step, epsilonBps, status: 'not_sent', quote, minAmountOut: min, durationMs })
    return { next: (await updateSwapIf(deps.sql, s, { step: s.step + 1 })) ?? (await reload(ctx)) }
  }
}

/** The step's transaction once final: executed ends the swap, reverted or dropped moves to the next ε. */
async function settleStep(
  ctx: Ctx,
  s: StoredSwap,
  record: OutboundRecord,
  quoted: Quoted | undefined,
  started: number,
): Promise<Transition> {
  const epsilonBps = EPSILON_LADDER_BPS[s.step] ?? 0
  const final = await waitFinal(ctx.deps, record)
  const base = {
    step: s.step,
    epsilonBps,
    txHash: record.txHash,
    ...(quoted ? { quote: quoted.quote, minAmountOut: quoted.min } : {}),
  }
  if (!final) {
    ctx.steps.push({ ...base, status: 'in_flight', durationMs: performance.now() - started })
    return { done: resultOf(s, 'pending', ctx.steps) }
  }
  const occurredAt = ctx.deps.clock.now()
  if (final.state === 'confirmed') {
    const { req, wallet } = ctx
    const receipt = await ctx.publicClient.getTransactionReceipt({ hash: final.txHash })
    const outcome = ctx.deps.adapter.parseOutcome({ ...ctx.leg, owner: wallet, recipient: wallet, receipt })
    if (outcome.status !== 'executed') throw new Error(`outbox says confirmed, receipt says ${receipt.status}`)
    const done = await ctx.deps.sql.begin(async (tx) => {
      await appendBatch(tx, executedEvents(req, final, outcome, occurredAt))
      const { sellAmount, buyAmount } = outcome
      return updateSwapIf(tx, s, { state: 'executed', txHash: final.txHash, sellAmount, buyAmount, lastError: null })
    })
    ctx.steps.push({ ...base, status: 'executed', gasWei: feePaidWei(final), durationMs: performance.now() - started })
    return { done: resultOf(done ?? (await reload(ctx)), 'executed', ctx.steps) }
  }
  // failed: reverted on chain (it burnt gas), or its nonce went to another transaction (it never will be mined)
  const reverted = final.gasUsed !== undefined
  const moved = await ctx.deps.sql.begin(async (tx) => {
    if (reverted) await appendBatch(tx, revertedEvents(ctx.req, final, { step: s.step, epsilonBps }, occurredAt))
    return updateSwapIf(tx, s, { step: s.step + 1 })
  })
  ctx.steps.push({
    ...base,
    status: reverted ? 'reverted' : 'dropped',
    ...(reverted ? { gasWei: feePaidWei(final) } : {}),
    durationMs: performance.now() - started,
  })
  return { next: moved ?? (await reload(ctx)) }
}
