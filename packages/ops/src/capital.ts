/**
 * The platform's own money (docs/ledger.md "Platform capital"): capital the operator brings in (the
 * funding subaccount's opening deposit, a hot or gas wallet topped up from the company's treasury)
 * or takes out is a journal event of its own on the platform's equity account, with the operator's
 * record, in one transaction. Without it the holding shows money the journal cannot explain, and
 * reconciliation reports a divergence for what is only the owner's deposit.
 */
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { append, type CapitalReference, capitalReference } from '@wh/ledger'
import { recordOperatorAction } from './actions'

export interface CapitalMovement {
  readonly direction: 'contributed' | 'withdrawn'
  /** `hot`: the hot wallet of `chain` (the funding subaccount on `derive`); `gas`: its gas wallet */
  readonly holding: 'hot' | 'gas'
  readonly chain: string
  readonly currency: string
  /** base units */
  readonly amount: bigint
  /** the movement once: its transaction (chain id and hash) or the treasury's reference, written in one spelling */
  readonly reference: CapitalReference
  readonly reason: string
  readonly actor: string
}

/**
 * Journals a capital movement at the clock's time and records who and why, in one transaction. A
 * second call with the same reference, however it was written (the ledger's capitalReference: one
 * spelling), changes nothing (`duplicate: true`): the event's key is the reference.
 *
 * @example
 *   await recordCapital(sql, systemClock, { direction: 'contributed', holding: 'hot', chain: 'ethereum',
 *     currency: 'USDC', amount: 50_000_000_000n, reference: { chainId: 1, txHash: '0xabc…' },
 *     reason: 'hot wallet float', actor: 'alice' })
 */
export async function recordCapital(
  sql: Sql,
  clock: Clock,
  c: CapitalMovement,
): Promise<{ eventId: string; idempotencyKey: string; duplicate: boolean; reference: string }> {
  const reference = capitalReference(c.reference)
  return sql.begin(async (tx) => {
    const r = await append(tx, {
      type: c.direction === 'contributed' ? 'capital_contributed' : 'capital_withdrawn',
      payload: {
        holding: c.holding,
        chain: c.chain,
        currency: c.currency,
        amount: c.amount,
        reference,
        reason: c.reason.slice(0, 500),
      },
      occurredAt: clock.now(),
    })
    if (!r.duplicate)
      await recordOperatorAction(tx, {
        action: 'capital_recorded',
        subject: `capital:${reference}`,
        actor: c.actor,
        reason: c.reason,
        details: {
          direction: c.direction,
          holding: c.holding,
          chain: c.chain,
          currency: c.currency,
          amount: c.amount.toString(),
          eventId: r.event.id,
        },
      })
    return { eventId: r.event.id, idempotencyKey: r.event.idempotencyKey, duplicate: r.duplicate, reference }
  })
}
