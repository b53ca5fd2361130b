/**
 * The withdrawals tick (spec 4.2, 3.2, 8.1 ACTIVE, 6.1): sends requested withdrawals from the
 * chain's hot wallet, exactly once, and journals them. docs/chains.md "Withdrawals" has the states.
 *
 * Why the row stays 'requested' until the send is journaled (spec 3.2, DESIGN): free balance =
 * transit − withdrawals in state 'requested', and `withdrawal_sent` (user:transit → user:external)
 * is what takes the amount out of transit. If the row left 'requested' (say for a stored
 * 'sending') before `withdrawal_sent` posted, the amount would count neither as reserved nor as
 * gone, and the free balance would rise by it for as long as the transaction is in flight: the
 * user could fund a subaccount or request a second withdrawal with money already on its way out.
 * So, per withdrawal, with its row locked (FOR UPDATE SKIP LOCKED, so replicas never work on the
 * same one):
 *   1. sendOnce (the outbox signs and records the transaction before broadcasting it; a retry or
 *      a restarted worker gets the same transaction back, never a second one);
 *   2. confirmOutbound;
 *   3. confirmed → ONE database transaction: append `withdrawal_sent` (slot 0) and its
 *      `gas_spent` (slot 1), and move the row 'requested' → 'sent' with tx hash, fee and sent_at.
 *      Transit and the reserve drop by the same amount in one commit, and the append holds the
 *      user's transit row lock that every reserve and authorizing append also takes, so no reader
 *      sees one change without the other: the free balance never goes up;
 *      failed → 'failed' with a reason: the money never left, the row stops counting as ACTIVE and
 *      the reserve is released (the ledger has no event for it, nothing was posted); the gas the
 *      reverted transaction burnt is a `gas_spent` at slot 0, its only event;
 *      not yet mined → the row stays 'requested' with its tx hash; the next tick resumes at 1.
 * "Sending" is therefore not a stored state: it is a 'requested' row with a tx hash.
 * A withdrawal still 'requested' WITHDRAWAL_STUCK_MINUTES after its request raises an alert (once
 * per period per withdrawal).
 */
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { appendBatch, type EventInput } from '@wh/ledger'
import type { Alerter, AlertFields, ChainInfo, ChainName, OutboundRecord, OutboundTransfer } from '@wh/wallet'

/**
 * The outbox contract of packages/wallet/src/outbox.ts (sendOnce / confirmOutbound, written
 * alongside this tick). Injected, so this processor compiles and is tested on its own; the tick
 * wiring passes `(t) => sendOnce(outboxDeps, t)` and `(id) => confirmOutbound(outboxDeps, id)`.
 */
export type { OutboundRecord, OutboundTransfer }
export interface OutboxPort {
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  /** exactly once per (purpose, refId, step), crash-safe */
  sendOnce(t: OutboundTransfer): Promise<OutboundRecord>
  confirmOutbound(id: string): Promise<OutboundRecord>
}

/** Withdrawals taken per tick (TIGER_STYLE: a bound on everything). */
export const WITHDRAWAL_SEND_BATCH = 20
/** Stuck withdrawals reported per tick. */
export const WITHDRAWAL_STUCK_ALERT_BATCH = 50
export const WITHDRAWAL_SEND_EVERY_MS = 15_000
export const WITHDRAWAL_SEND_TICK = 'withdrawals-send'

export interface WithdrawalSendDeps {
  readonly sql: Sql
  readonly outbox: OutboxPort
  /** the account that signs withdrawals on `chain`: the chain's hot wallet */
  readonly hotWallet: (chain: ChainName) => OutboundTransfer['signer']
  readonly alerter: Alerter
  /** WITHDRAWAL_STUCK_MINUTES */
  readonly stuckMinutes: number
  /** true once per key and period: a stuck withdrawal alerts once per period, not every tick */
  readonly claimAlert: (key: string, ttlMs: number) => Promise<boolean>
  readonly clock: Clock
  readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }
}

export interface WithdrawalSendSummary {
  sent: number
  failed: number
  /** broadcast, not yet confirmed; resumed next tick */
  pending: number
  /** the send threw (RPC down, hot wallet short, …); retried next tick */
  errors: number
  /** held by another replica */
  skipped: number
  stuckAlerts: number
}

interface Row {
  id: string
  user_id: string
  currency: string
  amount: string
  chain: string | null
  destination: string | null
  created_at: Date
}

type Outcome = 'sent' | 'failed' | 'pending' | 'skipped'

const feeOf = (r: OutboundRecord): bigint | undefined =>
  r.gasUsed !== undefined && r.effectiveGasPrice !== undefined ? r.gasUsed * r.effectiveGasPrice : undefined

/** The native token of a chain (pays the gas), from the registry. */
function nativeSymbol(deps: WithdrawalSendDeps, chain: ChainName): string {
  const native = deps.outbox.registry.get(chain)?.tokens.find((t) => t.contract === null)
  if (!native) throw new Error(`no native token for ${chain} in the registry`)
  return native.symbol
}

async function processOne(deps: WithdrawalSendDeps, id: string): Promise<Outcome> {
  // alerts go out after the commit: no chat round trip while the row and balances are locked
  const alerts: Array<[string, AlertFields]> = []
  const outcome = await deps.sql.begin(async (tx): Promise<Outcome> => {
    const [w] = await tx<Row[]>`
      select id, user_id, currency, amount, chain, destination, created_at from withdrawals
      where id = ${id} and state = 'requested'
      for update skip locked`
    if (!w) return 'skipped'
    const chain = w.chain as ChainName | null
    const token = deps.outbox.registry.get(chain as ChainName)?.tokens.find((t) => t.symbol === w.currency)
    if (!chain || !w.destination || !token) {
      // the API sets chain and destination in the reserve's own transaction; this is a bug, not
      // a user error, and sending it anywhere would be worse than releasing the reserve
      await tx`
        update withdrawals set state = 'failed', failure_reason = 'incomplete request: no route or destination',
          updated_at = now()
        where id = ${id}`
      alerts.push(['withdrawal failed: incomplete request', { withdrawalId: id }])
      return 'failed'
    }
    const transfer: OutboundTransfer = {
      chain,
      purpose: 'withdrawal',
      refId: w.id,
      signer: deps.hotWallet(chain),
      to: w.destination as OutboundTransfer['to'],
      token: token.symbol,
      amountBaseUnits: BigInt(w.amount),
    }
    let record = await deps.outbox.sendOnce(transfer)
    if (record.state === 'signed' || record.state === 'broadcast') record = await deps.outbox.confirmOutbound(record.id)
    const now = deps.clock.now()
    const fee = feeOf(record)
    const gasCurrency = nativeSymbol(deps, chain)

    if (record.state === 'confirmed') {
      const events: EventInput[] = [
        {
          type: 'withdrawal_sent',
          // key tx:{chain}:{txHash}:0 (ownTxKey slot 0), derived from the payload by the ledger
          payload: {
            userId: w.user_id,
            withdrawalId: w.id,
            chain,
            txHash: record.txHash,
            currency: w.currency,
            amount: BigInt(w.amount),
          },
          occurredAt: now,
        },
      ]
      // a second event about the same transaction: slot 1 (spec 6.1), else it would deduplicate
      if (fee !== undefined && fee > 0n)
        events.push({
          type: 'gas_spent',
          payload: { chain, txHash: record.txHash, slot: 1, currency: gasCurrency, amount: fee, userId: w.user_id },
          occurredAt: now,
        })
      await appendBatch(tx, events)
      await tx`
        update withdrawals set state = 'sent', tx_hash = ${record.txHash.toLowerCase()},
          network_fee = ${fee === undefined ? null : fee.toString()}, sent_at = ${now}, updated_at = ${now}
        where id = ${id}`
      deps.log.info({ withdrawalId: id, chain, txHash: record.txHash }, 'withdrawal sent')
      return 'sent'
    }
    if (record.state === 'failed') {
      // nothing left the hot wallet but gas: its only event, so slot 0
      if (fee !== undefined && fee > 0n)
        await appendBatch(tx, [
          {
            type: 'gas_spent',
            payload: { chain, txHash: record.txHash, slot: 0, currency: gasCurrency, amount: fee, userId: w.user_id },
            occurredAt: now,
          },
        ])
      await tx`
        update withdrawals set state = 'failed', failure_reason = 'transaction failed on chain',
          tx_hash = ${record.txHash.toLowerCase()}, network_fee = ${fee === undefined ? null : fee.toString()},
          updated_at = ${now}
        where id = ${id}`
      alerts.push(['withdrawal failed on chain; reserve released', { withdrawalId: id, chain, txHash: record.txHash }])
      return 'failed'
    }
    // in flight: keep it ACTIVE, remember the hash (shown by GET /withdrawals), resume next tick
    await tx`update withdrawals set tx_hash = ${record.txHash.toLowerCase()}, updated_at = ${now} where id = ${id}`
    return 'pending'
  })
  for (const [text, fields] of alerts) await deps.alerter.alert(text, fields)
  return outcome
}

/** Alerts on withdrawals still 'requested' WITHDRAWAL_STUCK_MINUTES after their request. */
async function alertStuck(deps: WithdrawalSendDeps): Promise<number> {
  const stuckMs = deps.stuckMinutes * 60_000
  const now = deps.clock.now()
  const rows = await deps.sql<(Row & { tx_hash: string | null })[]>`
    select id, user_id, currency, amount, chain, destination, created_at, tx_hash from withdrawals
    where state = 'requested' and created_at < ${new Date(now.getTime() - stuckMs)}
    order by created_at
    limit ${WITHDRAWAL_STUCK_ALERT_BATCH}`
  let alerts = 0
  for (const w of rows) {
    if (!(await deps.claimAlert(`withdrawal-stuck:${w.id}`, stuckMs))) continue
    alerts++
    await deps.alerter.alert(
      w.tx_hash ? 'withdrawal stuck: broadcast but not confirmed' : 'withdrawal stuck: not sent yet',
      {
        withdrawalId: w.id,
        chain: w.chain,
        currency: w.currency,
        amountBaseUnits: w.amount,
        txHash: w.tx_hash,
        minutesWaiting: Math.floor((now.getTime() - w.created_at.getTime()) / 60_000),
      },
    )
  }
  return alerts
}

/**
 * One tick: a bounded batch of requested withdrawals, oldest first, each sent and journaled in
 * its own transaction; then the stuck check.
 */
export async function sendWithdrawals(
  deps: WithdrawalSendDeps,
  opts: { batchSize?: number } = {},
): Promise<WithdrawalSendSummary> {
  const summary: WithdrawalSendSummary = { sent: 0, failed: 0, pending: 0, errors: 0, skipped: 0, stuckAlerts: 0 }
  const batch = await deps.sql<{ id: string }[]>`
    select id from withdrawals where state = 'requested'
    order by created_at, id
    limit ${opts.batchSize ?? WITHDRAWAL_SEND_BATCH}`
  for (const { id } of batch) {
    try {
      summary[await processOne(deps, id)]++
    } catch (err) {
      // retryable by nature (RPC outage, hot wallet short of funds, …): the row stays
      // 'requested' and the stuck alert catches one that never gets through
      summary.errors++
      deps.log.warn(
        { withdrawalId: id, err: err instanceof Error ? err.message : String(err) },
        'withdrawal send failed',
      )
    }
  }
  summary.stuckAlerts = await alertStuck(deps)
  return summary
}
