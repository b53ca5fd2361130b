/**
 * The deposit balance audit (one repeatable tick per chain, queue `deposits`): every deposit that
 * reaches a deposit address is accounted for. docs/chains.md "Every deposit is accounted for".
 *
 * The scanner sees top-level ETH transfers and ERC-20 logs; ETH sent by an internal call (a
 * smart wallet's execute, a batch payout) reaches the address unseen. So each tick compares what
 * a bounded batch of deposit addresses hold on chain with what the platform expects them to hold
 * (packages/wallet expected-balance.ts), at one block the scan has fully recorded: the scan
 * cursor's `next_block − 1`, where every deposit at or below it is in `deposits`.
 *
 * Which addresses: open surplus episodes first (a surplus is acted on at its second reading), then
 * addresses with activity since the last tick (deposits, outbound transactions), then a rotation
 * over all of deposit_addresses by hd_index, so every address is read within ⌈addresses / rotation
 * batch⌉ ticks. A tick's cost is bounded by its batches, not by the number of users.
 *
 * A surplus of at least the registry's minimum ETH deposit, seen at two readings: when the chain's
 * node serves traces, the successful internal transfers into the address since its last clean
 * reading are credited as deposits (a `deposits` row and `deposit_detected`, key
 * `tx:{chain}:{txHash}:{2^32 + traceIndex}`, one transaction), and the sweep then moves them like
 * any ETH deposit. What the traces do not explain (or every surplus, without a trace API) is alerted
 * once per episode and stays recorded in deposit_surpluses; the sweep never spends it (it spends at
 * most the expected balance).
 *
 * This run reads and decides; every write of the audit's tables and of the credited deposits is
 * store.ts'.
 */
import { LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import {
  BALANCE_READ_BATCH,
  type ChainClients,
  type ChainName,
  expectedEthBalances,
  type InternalTransfer,
  internalTransfersTo,
  isMethodUnavailable,
  knownTraceSupport,
  markTracesUnavailable,
  readBalances,
  TRACE_FILTER_MAX_BLOCKS,
  traceFilterAvailable,
} from '@wh/wallet'
import type { RunLog } from '../log'
import type { SurplusEpisode, SurplusReason } from '../rows'
import { claimSurplusAlert, creditTracedTransfers, recordReadings } from './store'
import { pickTargets } from './targets'
import {
  AUDIT_TRACE_FAILURE_READINGS,
  AUDIT_TRACE_LOOKBACK_BLOCKS,
  type DepositAuditDeps,
  type DepositAuditOptions,
  type DepositAuditResult,
  type DepositAuditTickDeps,
  depositAuditTickName,
} from './types'

const REASON_TEXT: Record<SurplusReason, string> = {
  'no-trace-api': "the chain's RPC has no trace API",
  'not-in-traces': 'the traces do not explain it',
  'trace-failed': 'the traces could not be read',
}

/** The alert of an unexplained surplus (its fields say where, how much and why). */
const ALERT_TEXT =
  'ETH at a deposit address that no credited deposit explains; it stays there until an operator decides'

/**
 * One run of the audit for `chain`.
 *
 * @example
 *   const r = await auditDepositBalances(deps, 'base')
 *   r.credited // internal transfers credited as deposits by this run
 */
export async function auditDepositBalances(
  deps: DepositAuditDeps,
  chain: ChainName,
  opts: DepositAuditOptions = {},
): Promise<DepositAuditResult> {
  const info = deps.registry.get(chain)
  const clients = deps.clients.get(chain)
  if (!info || !clients) throw new Error(`chain ${chain} is not configured`)
  const eth = info.tokens.find((t) => t.contract === null)
  if (!eth) throw new Error(`chain ${chain} has no native token in the registry`)
  const minSurplus = eth.minDepositBaseUnits
  const { sql } = deps
  const result: DepositAuditResult = {
    chain,
    status: 'audited',
    read: 0,
    priority: 0,
    rotation: 0,
    rotationWrapped: false,
    surpluses: 0,
    credited: 0,
    alerted: 0,
    resolved: 0,
    rpcCalls: 0,
    traceFailed: false,
  }

  // the block: the scan's cursor − 1, where every deposit at or below is recorded
  const [cursor] = await sql<{ next_block: string; halted_at: Date | null }[]>`
    select next_block, halted_at from chain_cursors where chain = ${chain}`
  if (!cursor || BigInt(cursor.next_block) < 1n) return { ...result, status: 'no-cursor' }
  if (cursor.halted_at !== null) return { ...result, status: 'halted' }
  const block = BigInt(cursor.next_block) - 1n
  result.block = block

  const picked = await pickTargets(sql, chain, block, opts, result)
  // --- read: the chain's balances and the platform's expectation, at the same block
  const list = [...picked.targets.values()]
  const addresses = list.map((t) => t.address)
  const balanceBatch = opts.balanceBatch ?? BALANCE_READ_BATCH
  const [expected, balances] = await Promise.all([
    expectedEthBalances(sql, { chain, addresses, atBlock: block }),
    readBalances(clients.publicClient, addresses, block, balanceBatch),
  ])
  result.read = list.length
  result.rpcCalls += Math.ceil(list.length / balanceBatch)
  const readings = list.map((t, i) => {
    const balance = balances[i] as bigint
    const exp = expected.get(t.address)?.expected ?? 0n
    return { target: t, balance, expected: exp, surplus: balance - exp >= minSurplus }
  })
  const surplusAddresses = readings.filter((r) => r.surplus).map((r) => r.target.address)
  result.surpluses = surplusAddresses.length
  const lookback = opts.traceLookbackBlocks ?? AUDIT_TRACE_LOOKBACK_BLOCKS
  const floor = block - lookback + 1n > 0n ? block - lookback + 1n : 0n
  result.resolved += await recordReadings(sql, {
    chain,
    block,
    floor,
    readings,
    surplusAddresses,
    activityTo: picked.activityTo,
    rotationNext: picked.rotationNext,
    rotationWrapped: result.rotationWrapped,
  })

  // --- explain the surpluses seen twice
  if (surplusAddresses.length > 0) await explain(deps, chain, block, minSurplus, surplusAddresses, opts, result)
  return result
}

/**
 * The open episodes among `addresses` at their second reading or later: credit what the traces
 * show, then alert (once per episode) what they do not.
 */
async function explain(
  deps: DepositAuditDeps,
  chain: ChainName,
  block: bigint,
  minSurplus: bigint,
  addresses: readonly string[],
  opts: DepositAuditOptions,
  result: DepositAuditResult,
): Promise<void> {
  const { sql } = deps
  const client = (deps.clients.get(chain) as ChainClients).publicClient
  const episodes = await sql<SurplusEpisode[]>`
    select id, address, hd_index, user_id, amount::text, readings, trace_from_block::text, traced_to_block::text,
      alerted_at
    from deposit_surpluses
    where chain = ${chain} and state = 'open' and readings >= 2 and address = any(${addresses}::text[])`
  if (episodes.length === 0) return
  const startOf = (e: SurplusEpisode) =>
    e.traced_to_block !== null ? BigInt(e.traced_to_block) + 1n : BigInt(e.trace_from_block)
  const toTrace = episodes.filter((e) => startOf(e) <= block)

  let reason: SurplusReason = 'not-in-traces'
  if (toTrace.length > 0) {
    let transfers: InternalTransfer[] | undefined
    try {
      if (knownTraceSupport(client) === undefined) result.rpcCalls++ // the probe, once per chain and process
      if (await traceFilterAvailable(client, block)) {
        let fromBlock = block
        for (const e of toTrace) if (startOf(e) < fromBlock) fromBlock = startOf(e)
        const r = await internalTransfersTo(client, {
          addresses: new Set(toTrace.map((e) => e.address.toLowerCase())),
          fromBlock,
          toBlock: block,
          maxBlocksPerCall: opts.maxBlocksPerTraceCall ?? TRACE_FILTER_MAX_BLOCKS,
        })
        result.rpcCalls += r.rpcCalls
        transfers = r.transfers
      } else {
        reason = 'no-trace-api'
      }
    } catch (e) {
      if (isMethodUnavailable(e)) {
        // trace_filter answered the probe but trace_transaction is missing: no trace API here
        markTracesUnavailable(client)
        reason = 'no-trace-api'
      } else {
        // a timeout, a node without the state of those blocks: try again next tick, alert if it lasts
        // (the error itself is not kept: a viem error names the RPC URL, which carries a key)
        result.traceFailed = true
        reason = 'trace-failed'
      }
    }
    if (transfers !== undefined) {
      result.credited += await credit(deps, chain, block, minSurplus, toTrace, transfers, startOf)
    }
  }

  await alertStillOpen(deps, chain, block, episodes, reason, result)
}

/** What is still open after the credits: alerted once per episode (a trace failure only once it lasts). */
async function alertStillOpen(
  deps: DepositAuditDeps,
  chain: ChainName,
  block: bigint,
  episodes: readonly SurplusEpisode[],
  reason: SurplusReason,
  result: DepositAuditResult,
): Promise<void> {
  const { sql } = deps
  const still = await sql<(SurplusEpisode & { reason: SurplusReason | null })[]>`
    select id, address, hd_index, user_id, amount::text, readings, trace_from_block::text, traced_to_block::text,
      alerted_at, reason
    from deposit_surpluses
    where id = any(${episodes.map((e) => e.id)}::uuid[]) and state = 'open'`
  for (const e of still) {
    if (reason === 'trace-failed' && e.readings < AUDIT_TRACE_FAILURE_READINGS) continue
    const why = e.reason ?? reason
    if (!(await claimSurplusAlert(sql, e.id, why))) continue
    result.alerted++
    await deps.alerter.alert(ALERT_TEXT, {
      chain,
      address: e.address,
      userId: e.user_id,
      surplusWei: e.amount,
      block: block.toString(),
      reason: REASON_TEXT[why],
      tracedBlocks: e.traced_to_block === null ? 'none' : `${e.trace_from_block}-${e.traced_to_block}`,
    })
  }
}

/**
 * Credits the transfers each episode's traces show (in its own range, above the dust limit) as
 * deposits, with the episodes' new state (@wh/deposits `creditTracedTransfers`, one transaction).
 */
async function credit(
  deps: DepositAuditDeps,
  chain: ChainName,
  block: bigint,
  minSurplus: bigint,
  episodes: readonly SurplusEpisode[],
  transfers: readonly InternalTransfer[],
  startOf: (e: SurplusEpisode) => bigint,
): Promise<number> {
  const byAddress = new Map(episodes.map((e) => [e.address.toLowerCase(), e]))
  // the scanner's dust rule: a transfer below the minimum deposit is not credited
  const mine = transfers.filter((t) => {
    const e = byAddress.get(t.to)
    return e !== undefined && t.blockNumber >= startOf(e) && t.blockNumber <= block && t.valueWei >= minSurplus
  })
  return creditTracedTransfers(deps.sql, { chain, block, minSurplus, episodes, transfers: mine })
}

/**
 * One audit tick of `chain` (the worker's `deposits-audit-<chain>`): never on an RPC that has not
 * answered its chain id, under a Redis lock per chain. A JSON-safe result (BullMQ stores it).
 */
export async function runDepositAuditTick(deps: DepositAuditTickDeps, log: RunLog, chain: ChainName) {
  // never credit from an RPC that is not this chain (docs/hostile-world.md)
  if (!(await deps.chainGuard.ready(chain))) return { chain, status: 'unverified' }
  const result = await withLock(deps.redis, `lock:${depositAuditTickName(chain)}`, LOCK_TTL_MS, () =>
    auditDepositBalances(deps, chain),
  )
  if (!result) return { chain, status: 'locked' }
  if (result.credited > 0 || result.alerted > 0) {
    log.info(
      { chain, block: result.block?.toString(), credited: result.credited, alerted: result.alerted },
      'deposit audit',
    )
  }
  if (result.traceFailed) log.warn({ chain }, 'deposit audit: traces could not be read; retried next tick')
  // BullMQ stores the return value as JSON: no bigints
  return { ...result, block: result.block?.toString() }
}
