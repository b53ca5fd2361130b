/**
 * A conversion round's movements (docs/trading.md "Conversions and swaps", "States"): the deposit
 * of the bought amount and the withdraw of the sold amount, each signed and then stored with the
 * round's transition in ONE transaction, so the action exists in the database before it is ever
 * sent. The round's side of it is a transition of the conversion store (store.ts).
 */
import type { Sql } from '@wh/db'
import { exchangeAmount, insertSignedMovement, signMovement, type TransferRow } from '@wh/subaccounts'
import type { ConvertDeps, Movement, Round } from './types'

/** Rolls back a transaction whose conditional update found the round moved on. */
class RoundMovedError extends Error {}

/**
 * Signs a movement and stores it with the round's `transition` (the store's conditional update,
 * given the stored row's id), in one transaction. Null when the round moved meanwhile: the
 * transition matched nothing and the movement is rolled back with it.
 */
export async function storeMovement(
  deps: ConvertDeps,
  round: Round,
  m: Movement,
  transition: (tx: Sql, transferId: string) => Promise<boolean>,
): Promise<TransferRow | null> {
  const exchangeId = Number(round.exchange_id)
  const signed = await signMovement(deps, {
    method: m.method,
    subaccountId: exchangeId,
    currency: m.currency,
    amount: await exchangeAmount(deps.exchange, m.currency, m.units),
  })
  return deps.sql
    .begin(async (t) => {
      const tx = t as unknown as Sql
      const row = await insertSignedMovement(
        deps,
        tx,
        {
          kind: m.kind,
          method: m.method,
          userId: round.user_id,
          subaccountId: round.subaccount_id,
          exchangeSubaccountId: exchangeId,
          currency: m.currency,
          units: m.units,
        },
        signed,
      )
      if (!(await transition(tx, row.id))) throw new RoundMovedError()
      return row
    })
    .then(async (row) => {
      await deps.hooks?.afterStored?.(row)
      return row
    })
    .catch((e) => {
      if (e instanceof RoundMovedError) return null
      throw e
    })
}
