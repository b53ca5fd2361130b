/**
 * The withdrawal send (spec 4.2, 3.2, 8.1 ACTIVE, 6.1): sends one requested withdrawal from the
 * chain's hot wallet, exactly once, and journals it (`sendWithdrawal`). The worker's
 * `withdrawals-send` tick runs it over the due rows (send-round.ts), on the deps send-deps.ts
 * builds; the request is request.ts, the row's writes transitions.ts. docs/chains.md "Withdrawals"
 * has the states, docs/hostile-world.md what happens when users, RPCs or the chain misbehave.
 *
 * Why the row stays 'requested' until the send is journaled (spec 3.2; docs/ledger.md "The money path" step 10): free balance =
 * transit − withdrawals in state 'requested', and `withdrawal_sent` (user:transit → user:external)
 * is what takes the amount out of transit. If the row left 'requested' (say for a stored
 * 'sending') before `withdrawal_sent` posted, the amount would count neither as reserved nor as
 * gone, and the free balance would rise by it for as long as the transaction is in flight: the
 * user could fund a subaccount or request a second withdrawal with money already on its way out.
 * So, per withdrawal, with its row locked (FOR UPDATE SKIP LOCKED, so replicas never work on the
 * same one):
 *   1. sendOnce (the outbox signs and records the transaction before broadcasting it; a retry or
 *      a restarted worker gets the same transaction back, never a second one);
 *   2. confirmOutbound (final only at confirmed depth; replaced when stuck; held for an operator
 *      when the chain's answers contradict each other, never released on them);
 *   3. confirmed → ONE database transaction: append `withdrawal_sent` (slot 0) and its
 *      `gas_spent` (slot 1), and move the row 'requested' → 'sent' with tx hash, fee and sent_at;
 *      failed (a receipt that reverted) → 'failed' with a reason: the reserve is released, the
 *      burnt gas is a `gas_spent` at slot 0; held → the row keeps its reserve, is marked held and
 *      leaves the queue until an operator decides; not yet mined → the row stays 'requested'.
 *
 * A preparation that fails records the attempt on the row and pushes it back by a growing delay; one
 * that fails for good (the destination refuses: the dry run reverts while the hot wallet holds the
 * amount, or it needs more gas than the budget) ends the row as 'failed' with a reason the user can
 * read (send-verdict.ts). Which rows a tick takes, and in what order, is send-round.ts.
 *
 * The user's failures are the user's (cooling.ts): an ETH withdrawal never risks more gas than its
 * amount, the gas of one that fails on chain is charged to its user, and after two such failures
 * the user's fresh rows to addresses with code fail instead of being signed.
 */

import type { Clock } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import type { Alerter, AlertFields, ChainInfo, ChainName, OutboundRecord, OutboundTransfer } from '@wh/wallet'
import { WITHDRAWAL_FAILURES_BEFORE_COOLING } from './cooling'
import { errorText, type Retry, type VerdictPorts, verdictOf } from './send-verdict'
import {
  type ClaimedWithdrawal,
  claimForSend,
  type FailureCode,
  failOwnDestinations,
  markFailed,
  markHeld,
  markNotSent,
  markReverted,
  markSent,
  recordAttempt,
  recordBroadcast,
  recordSendError,
} from './transitions'

/**
 * The outbox contract of packages/wallet/src/outbox.ts (sendOnce / confirmOutbound). Injected, so
 * this processor compiles and is tested on its own; the tick wiring passes the real outbox.
 */
export type { OutboundRecord, OutboundTransfer }
export interface OutboxPort extends VerdictPorts {
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  /** exactly once per (purpose, refId, step), crash-safe */
  sendOnce(t: OutboundTransfer): Promise<OutboundRecord>
  confirmOutbound(id: string): Promise<OutboundRecord>
  /** whether the outbox holds a transaction for this withdrawal (signed, whatever happened since) */
  hasTransaction(withdrawalId: string): Promise<boolean>
  /** base units of `token` that `address` holds on `chain` (tells "the wallet is short" from "the destination refuses") */
  balanceOf(chain: ChainName, token: OutboundTransfer['token'], address: `0x${string}`): Promise<bigint>
  /** whether `address` holds code on `chain` (a cooling user's contract destinations wait); false when not wired */
  hasCode?(chain: ChainName, address: `0x${string}`): Promise<boolean>
}

/** A hot wallet short of a token on a chain alerts once per this period. */
export const HOT_WALLET_SHORT_ALERT_MS = 30 * 60_000

export interface WithdrawalSendDeps {
  readonly sql: Sql
  readonly outbox: OutboxPort
  /** the account that signs withdrawals on `chain`: the chain's hot wallet */
  readonly hotWallet: (chain: ChainName) => OutboundTransfer['signer']
  /** the platform's own addresses, lowercase (a withdrawal there is refused) */
  readonly platformAddresses: ReadonlySet<string>
  /**
   * whether `chain`'s RPC answered its chain id (ChainGuard): a dry run on another network could
   * fail a withdrawal that is fine on its own; throws when the RPC is another chain
   */
  readonly chainReady?: (chain: ChainName) => Promise<boolean>
  readonly alerter: Alerter
  /** WITHDRAWAL_STUCK_MINUTES */
  readonly stuckMinutes: number
  /** true once per key and period: a stuck withdrawal alerts once per period, not every tick */
  readonly claimAlert: (key: string, ttlMs: number) => Promise<boolean>
  readonly clock: Clock
  readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }
}

/** What one send did to its row (the tick's summary counts them; see WithdrawalSendSummary). */
export type WithdrawalSendOutcome = 'sent' | 'failed' | 'pending' | 'skipped' | 'held' | 'errors'
type Outcome = WithdrawalSendOutcome

/**
 * One send's result: its outcome, and for 'errors' why and whether the chain itself is down (the
 * chain's other rows then wait for the next run).
 */
export interface WithdrawalSendResult {
  readonly outcome: WithdrawalSendOutcome
  readonly retry?: Retry
}
/** An alert to send after the commit: text, fields, and a key that sends it once per period. */
type Alert = [string, AlertFields, string?]

const feeOf = (r: OutboundRecord): bigint | undefined =>
  r.gasUsed !== undefined && r.effectiveGasPrice !== undefined ? r.gasUsed * r.effectiveGasPrice : undefined

/** The native token of a chain (pays the gas), from the registry. */
function nativeSymbol(deps: WithdrawalSendDeps, chain: ChainName): string {
  const native = deps.outbox.registry.get(chain)?.tokens.find((t) => t.contract === null)
  if (!native) throw new Error(`no native token for ${chain} in the registry`)
  return native.symbol
}

/** The transfer a claimed row asks for: ETH never risks more gas than its amount (so a failure's gas can be charged). */
function transferOf(
  deps: WithdrawalSendDeps,
  w: ClaimedWithdrawal,
  chain: ChainName,
  token: TokenOf,
): OutboundTransfer {
  return {
    chain,
    purpose: 'withdrawal',
    refId: w.id,
    signer: deps.hotWallet(chain),
    to: w.destination as OutboundTransfer['to'],
    token: token.symbol,
    amountBaseUnits: BigInt(w.amount),
    ...(token.contract === null && { maxFeeWeiAtMost: BigInt(w.amount) }),
  }
}

type TokenOf = ChainInfo['tokens'][number]

/** A cooling user's fresh row to an address with code waits no more: it fails (cooling.ts). */
async function coolingRefuses(deps: WithdrawalSendDeps, w: ClaimedWithdrawal, chain: ChainName): Promise<boolean> {
  if (w.recentFailures < WITHDRAWAL_FAILURES_BEFORE_COOLING || !deps.outbox.hasCode) return false
  if (await deps.outbox.hasTransaction(w.id)) return false
  return deps.outbox.hasCode(chain, w.destination as `0x${string}`)
}

/** One row, locked for the send, in its own transaction (a tick's round and the `withdrawal.send` job alike). */
export async function processOne(deps: WithdrawalSendDeps, id: string): Promise<{ outcome: Outcome; retry?: Retry }> {
  // alerts go out after the commit: no chat round trip while the row and balances are locked
  const alerts: Alert[] = []
  const result = await deps.sql.begin(async (tx): Promise<{ outcome: Outcome; retry?: Retry }> => {
    const now = deps.clock.now()
    const w = await claimForSend(tx, id)
    if (!w) return { outcome: 'skipped' }
    const chain = w.chain as ChainName | null
    const token = deps.outbox.registry.get(chain as ChainName)?.tokens.find((t) => t.symbol === w.currency)
    const fail = async (code: FailureCode) => {
      await markFailed(tx, id, code, now)
      return { outcome: 'failed' as const }
    }
    if (!chain || !w.destination || !token) {
      // the request writes chain and destination in the reserve's own INSERT; this is a bug, not
      // a user error, and sending it anywhere would be worse than releasing the reserve
      alerts.push(['withdrawal failed: incomplete request', { withdrawalId: id }])
      return fail('INCOMPLETE')
    }
    if (await coolingRefuses(deps, w, chain)) return fail('CONTRACT_DESTINATIONS_COOLING')
    const transfer = transferOf(deps, w, chain, token)
    let record: OutboundRecord
    try {
      record = await deps.outbox.sendOnce(transfer)
    } catch (err) {
      // a transaction exists (signed, its broadcast failed): it holds a nonce of the hot wallet,
      // so it is never pushed back; the next run re-broadcasts those very bytes
      if (await deps.outbox.hasTransaction(w.id)) throw err
      const verdict = await verdictOf(deps.outbox, transfer, err, w.sendErrors)
      if ('fail' in verdict) return fail(verdict.fail)
      if (verdict.code === 'SEND_ERROR') await recordSendError(tx, id, w.attempts + 1, now)
      else await recordAttempt(tx, id, w.attempts + 1, verdict.code, now)
      if (verdict.code === 'HOT_WALLET_SHORT')
        alerts.push([
          'withdrawals wait: the hot wallet is short of funds',
          { chain, token: token.symbol, withdrawalId: id, detail: verdict.detail },
          `hot-wallet-short:${chain}:${token.symbol}`,
        ])
      return { outcome: 'errors', retry: verdict }
    }
    if (record.state === 'signed' || record.state === 'broadcast') record = await deps.outbox.confirmOutbound(record.id)
    return settle(deps, tx, { w, chain, record, now, native: token.contract === null }, alerts)
  })
  for (const [text, fields, onceKey] of alerts) {
    if (onceKey === undefined || (await deps.claimAlert(onceKey, HOT_WALLET_SHORT_ALERT_MS)))
      await deps.alerter.alert(text, fields)
  }
  return result
}

/** What the outbox's record says of a claimed row's transaction, written in the claim's transaction. */
async function settle(
  deps: WithdrawalSendDeps,
  tx: Queryable,
  sent: { w: ClaimedWithdrawal; chain: ChainName; record: OutboundRecord; now: Date; native: boolean },
  alerts: Alert[],
): Promise<{ outcome: Outcome }> {
  const { w, chain, record, now } = sent
  const mined = { chain, txHash: record.txHash, fee: feeOf(record), gasCurrency: nativeSymbol(deps, chain) }
  switch (record.state) {
    case 'confirmed':
      await markSent(tx, w, mined, now)
      deps.log.info({ withdrawalId: w.id, chain, txHash: record.txHash }, 'withdrawal sent')
      return { outcome: 'sent' }
    case 'failed': {
      if (record.filled) {
        // a no-op took the nonce of bytes the node refused for good: nothing of the user's ran
        await markNotSent(tx, w, mined, now)
        alerts.push([
          'withdrawal not sent: the network refused it; its nonce was filled',
          { withdrawalId: w.id, chain },
        ])
        return { outcome: 'failed' }
      }
      // the user's failure: an ETH withdrawal's gas is charged to them, at most its amount
      const amount = BigInt(w.amount)
      const fee = mined.fee ?? 0n
      const charged = sent.native ? (fee < amount ? fee : amount) : 0n
      await markReverted(tx, w, mined, now, charged)
      alerts.push([
        'withdrawal failed on chain; reserve released',
        { withdrawalId: w.id, chain, txHash: record.txHash, chargedWei: charged.toString() },
      ])
      return { outcome: 'failed' }
    }
    case 'held':
      // the outbox alerted when it held the transaction; the reserve stays until an operator decides
      await markHeld(tx, w.id, record.txHash, now)
      return { outcome: 'held' }
    default:
      // in flight: keep it ACTIVE, remember the hash (shown by GET /withdrawals), resume next tick
      await recordBroadcast(tx, w.id, record.txHash, now)
      return { outcome: 'pending' }
  }
}

/**
 * Refuses, before anything is signed, a destination that is the platform's own (a platform wallet
 * or any deposit address): the API refuses these at request time; this catches a row from before
 * a wallet was registered. Returns the ids it failed.
 */
export async function refuseOwnDestinations(deps: WithdrawalSendDeps, rows: readonly DueRow[]): Promise<Set<string>> {
  const fresh = rows.filter((r) => r.tx_hash === null && r.destination !== null)
  if (fresh.length === 0) return new Set()
  const destinations = fresh.map((r) => r.destination as string)
  const deposit = await deps.sql<{ address: string }[]>`
    select address from deposit_addresses where address = any(${destinations}::text[])`
  const own = new Set([...deposit.map((d) => d.address.toLowerCase())])
  const refused = fresh.filter(
    (r) =>
      own.has((r.destination as string).toLowerCase()) ||
      deps.platformAddresses.has(r.destination?.toLowerCase() ?? ''),
  )
  if (refused.length === 0) return new Set()
  const ids = refused.map((r) => r.id)
  await failOwnDestinations(deps.sql, ids, deps.clock.now())
  return new Set(ids)
}

/** A requested withdrawal as the send picks it: what the own-destination check and the chain's turn read. */
export interface DueRow {
  id: string
  chain: string | null
  destination: string | null
  tx_hash: string | null
}

/**
 * Whether `chain`'s RPC answered its chain id (ChainGuard): a dry run on another network could fail
 * a withdrawal that is fine on its own. One that is another chain is logged and counts as not ready.
 */
export async function chainIsReady(deps: WithdrawalSendDeps, chain: string): Promise<boolean> {
  return (deps.chainReady?.(chain as ChainName) ?? Promise.resolve(true)).catch((err: unknown) => {
    deps.log.warn({ chain, err: errorText(err) }, 'withdrawals: the chain RPC is not this chain')
    return false
  })
}

const probeOf = (deps: WithdrawalSendDeps, chain: string) =>
  deps.outbox.probe?.(chain as ChainName).catch(() => false) ?? Promise.resolve(true)

/**
 * Sends one withdrawal by id, as far as the chain allows now: loads the row (only while
 * 'requested' and not held), refuses a destination that is the platform's own, waits while its
 * chain's RPC is unverified, then claims it (FOR UPDATE SKIP LOCKED) and applies the policy: sent
 * and journaled, failed with the user's reason, held, pending (again later), or an error the row
 * waits out. The tick's round calls it for every due row; a job of its own may call it for one.
 * Exactly once whoever calls it: the claim's lock and the outbox's one transaction per withdrawal.
 *
 * @example
 *   const { outcome, retry } = await sendWithdrawal(deps, withdrawalId) // 'pending': run it again later
 */
export async function sendWithdrawal(deps: WithdrawalSendDeps, id: string): Promise<WithdrawalSendResult> {
  let chain = ''
  try {
    const [row] = await deps.sql<DueRow[]>`
      select id, chain, destination, tx_hash from withdrawals
      where id = ${id} and state = 'requested' and held_at is null`
    if (!row) return { outcome: 'skipped' }
    chain = row.chain ?? ''
    if ((await refuseOwnDestinations(deps, [row])).size > 0) return { outcome: 'failed' }
    if (!(await chainIsReady(deps, chain)))
      return { outcome: 'errors', retry: { code: 'RPC_UNAVAILABLE', chainDown: true, detail: 'chain not verified' } }
    return await processOne(deps, id)
  } catch (err) {
    // after the outbox has a row (a broadcast or the confirmation's reads failed): the
    // transaction is out there, so the row is not pushed back. The chain is down for this run
    // only when its own probe fails: one row's error never stops the others
    deps.log.warn({ withdrawalId: id, chain, err: errorText(err) }, 'withdrawal send failed')
    const down = (err as { code?: unknown }).code === 'CHAIN_UNAVAILABLE' || !(await probeOf(deps, chain))
    return { outcome: 'errors', retry: { code: 'RPC_UNAVAILABLE', chainDown: down, detail: errorText(err) } }
  }
}
