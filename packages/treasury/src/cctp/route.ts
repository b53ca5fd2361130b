/**
 * The L2 route's runs (docs/chains.md "The L2 route", "Rebalancing"): `runCctpSweep` sends an L2 hot wallet's
 * surplus to L1 (the bridge tick of each L2 runs it), `runCctpRefill` sends L1 USDC to an L2 short of its target
 * or of a waiting withdrawal (the refill tick of each L2). Each first finishes the route's open transfer (at most
 * one per route: a unique index), so a crash anywhere resumes it, and only a run that finds none starts another.
 */
import { randomUUID } from 'node:crypto'
import { type L2ChainName, LOCK_TTL_MS } from '@wh/config'
import { errorMessage, minBigint } from '@wh/core'
import { withLock } from '@wh/jobs'
import type { Redis } from 'ioredis'
import { bridgeLockKey, cctpRefillLockKey } from '../locks'
import { burnAmountOf, chooseMode, grossFor, L1, refillNeedOf, sweepAmountOf, targetOf, walletPosition } from './plan'
import { type CctpReason, type CctpRow, insertTransfer, openTransfer, transferById } from './store'
import { advanceCctp, type CctpAdvance, type CctpAdvanceOptions, type CctpDeps } from './transfer'

export type CctpRunDeps = CctpDeps & { readonly redis: Redis }

export type CctpRunResult =
  | CctpAdvance
  | { readonly state: 'idle'; readonly reason: string }
  /** something to move, and a reason it does not move now (fees above the maximum, L1 short, fees unreadable) */
  | { readonly state: 'waiting'; readonly reason: string; readonly amount: bigint }

/** Ops told once an hour per route and reason (a Redis key with that lifetime). */
async function alertOnce(deps: CctpRunDeps, key: string, text: string, fields: Record<string, string>): Promise<void> {
  const claimed = await deps.redis.set(`alert:cctp:${key}`, '1', 'PX', 3_600_000, 'NX')
  if (claimed === 'OK') await deps.alerter.alert(text, fields)
}

/** Starts a transfer of `amount` on the route, in the mode its fees allow; waits (and says why) when none does. */
async function start(
  deps: CctpRunDeps,
  route: { source: L2ChainName | 'ethereum'; dest: L2ChainName | 'ethereum'; reason: CctpReason; l2: L2ChainName },
  amount: bigint,
  o: CctpAdvanceOptions,
  /** the most the source may send (a refill: what L1 holds free) */
  cap?: bigint,
): Promise<CctpRunResult> {
  let mode: Awaited<ReturnType<typeof chooseMode>>
  try {
    mode = await chooseMode(deps, route, amount, targetOf(deps, route.l2).maxFee)
  } catch (e) {
    return { state: 'waiting', reason: `CCTP fees not readable: ${errorMessage(e)}`, amount }
  }
  if ('refused' in mode) {
    await alertOnce(deps, `fee:${route.source}:${route.dest}`, 'CCTP transfer waits: its fee is above the maximum', {
      route: `${route.source} → ${route.dest}`,
      amount: amount.toString(),
      reason: mode.refused,
    })
    return { state: 'waiting', reason: mode.refused, amount }
  }
  // a refill grosses up by the mode's fee, so what arrives covers the need; a sweep sends what is there
  const gross = route.reason === 'refill' ? grossFor(amount, mode.rate) : amount
  const burned = burnAmountOf(gross, cap)
  const row = await insertTransfer(deps.sql, {
    id: randomUUID(),
    source: route.source,
    dest: route.dest,
    reason: route.reason,
    amount: burned,
    maxFee: mode.maxFee,
    minFinality: mode.minFinality,
    now: deps.clock.now(),
  })
  if (!row) {
    // another process opened one on the route meanwhile: its run finishes it
    if (await openTransfer(deps.sql, route.source, route.dest))
      return { state: 'idle', reason: 'a transfer on this route was opened meanwhile' }
    // another transfer from this source is burning: they spend one allowance of its hot wallet, so one
    // at a time (migration 0047); this one starts on a run after that burn is final
    return { state: 'waiting', reason: `another transfer from ${route.source} is burning`, amount }
  }
  return advanceCctp(deps, row, o)
}

/** One run for an L2's surplus: the open sweep finished first, else a new one when the surplus is worth it. */
export async function runCctpSweep(
  deps: CctpRunDeps,
  chain: L2ChainName,
  o: CctpAdvanceOptions = {},
): Promise<CctpRunResult> {
  const open = await openTransfer(deps.sql, chain, L1)
  if (open) return advanceCctp(deps, open, o)
  const amount = sweepAmountOf(targetOf(deps, chain), await walletPosition(deps, chain))
  if (amount === 0n) return { state: 'idle', reason: 'no surplus above the target' }
  return start(deps, { source: chain, dest: L1, reason: 'sweep', l2: chain }, amount, o)
}

/**
 * One run for an L2's shortfall: the open refill finished first, else a new one from what L1 holds free (above
 * its retained amount and its own requested withdrawals; the treasury brings more from the exchange).
 */
export async function runCctpRefill(
  deps: CctpRunDeps,
  chain: L2ChainName,
  o: CctpAdvanceOptions = {},
): Promise<CctpRunResult> {
  const open = await openTransfer(deps.sql, L1, chain)
  if (open) return advanceCctp(deps, open, o)
  const t = targetOf(deps, chain)
  const position = await walletPosition(deps, chain)
  const need = refillNeedOf(t, position)
  if (need === 0n) return { state: 'idle', reason: 'at or near its target' }
  const l1 = await walletPosition(deps, L1)
  const available = l1.free - deps.config.bridgeRetainUsdcBaseUnits
  const waiting = position.requested - position.balance
  // L1 sends what it has above what it keeps, when that is worth a transfer (or is all a waiting withdrawal lacks)
  const amount = minBigint(available, need)
  if (amount <= 0n || (amount < t.minTransfer && amount < waiting))
    return {
      state: 'waiting',
      reason: `L1 holds ${available > 0n ? available : 0n} free of ${need} needed`,
      amount: need,
    }
  return start(deps, { source: L1, dest: chain, reason: 'refill', l2: chain }, amount, o, available)
}

/** The lock a transfer's route runs under: its L2's bridge lock for a sweep (L2 → L1), its refill lock for a refill. */
export function routeLockKey(row: Pick<CctpRow, 'source_chain' | 'dest_chain'>): string {
  return row.source_chain === L1 ? cctpRefillLockKey(row.dest_chain as L2ChainName) : bridgeLockKey(row.source_chain)
}

const isOpen = (row: CctpRow) => row.state === 'burning' || row.state === 'attesting' || row.state === 'minting'

/**
 * One transfer by its id, moved as far as it can go now under its route's lock (a job per transfer may call it; the
 * route's tick does the same): `locked` while another process holds the route, undefined when the transfer is
 * unknown or no longer open.
 */
export async function advanceCctpTransfer(
  deps: CctpRunDeps,
  id: string,
  o: CctpAdvanceOptions = {},
): Promise<CctpAdvance | { readonly state: 'locked'; readonly id: string } | undefined> {
  const row = await transferById(deps.sql, id)
  if (!row || !isOpen(row)) return undefined
  const r = await withLock(deps.redis, routeLockKey(row), LOCK_TTL_MS, async () => {
    // read again under the lock: the route's run may have moved it meanwhile
    const current = await transferById(deps.sql, id)
    return current && isOpen(current) ? advanceCctp(deps, current, o) : null
  })
  if (r === undefined) return { state: 'locked', id }
  return r ?? undefined
}
