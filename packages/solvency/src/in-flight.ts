/**
 * Money between two places a solvency run reads (docs/solvency.md "In flight"): counted as an
 * asset so that a transfer caught between its two readings is neither a deficit nor a surplus.
 *
 * - a withdrawal whose transaction is mined (at or below the block the chain was read at) while
 *   the withdrawal is still `requested`: the hot wallet no longer holds it, the journal still owes
 *   it until `withdrawal_sent` is recorded;
 * - the newest bridge transfer of the chain, mined at the source, whose `bridged` is not journaled
 *   yet: it left the hot wallet and is on its way to the exchange wallet (at most one is open per
 *   chain; the journal records it once delivered);
 * - v3: the chain's open treasury withdrawal (signed or sent, docs/chains.md "Treasury"): it may have
 *   left the funding subaccount and not reached the hot wallet yet. Counted until its `bridged` is
 *   journaled, so a run never sees it nowhere; while the exchange still holds it, or once it is paid
 *   and not yet journaled, it is counted twice: a surplus for a moment, never a deficit. While Derive's
 *   L1 throttle queues part of it, the part already paid is counted twice for as long as the queue
 *   lasts: subtracting it would need each payment's block against this run's own, and a provider
 *   behind the treasury's would then show a deficit that is not there;
 * - a CCTP transfer whose burn is mined on this chain (at or below the block read) and whose mint is not journaled:
 *   the USDC left the source hot wallet and is nowhere on chain until the destination mints it. Counted on the
 *   source chain, one leg per transfer (place `{chain}:cctp:{id}`), until the transaction that journals the mint
 *   (`bridged`) closes the row; once minted and not yet journaled it is counted twice for a moment (a surplus). A
 *   transfer past CCTP's documented time stays here, and the CCTP tick tells ops (docs/chains.md "The L2 route").
 */
import type { Sql } from '@wh/db'
import { ownTxKey, recordedKeys } from '@wh/ledger'
import type { ChainName } from '@wh/wallet'
import type { Leg } from './legs'

export async function inFlightLegs(sql: Sql, chain: ChainName, atBlock: bigint): Promise<Leg[]> {
  const block = atBlock.toString()
  const [withdrawals, bridges, treasury, cctp] = await Promise.all([
    sql<{ currency: string; v: string }[]>`
      select w.currency, sum(w.amount)::text as v from withdrawals w
      join outbound_txs o on o.purpose = 'withdrawal' and o.ref_id = w.id::text
      where w.state = 'requested' and o.chain = ${chain} and o.state <> 'failed'
        and o.block_number is not null and o.block_number <= ${block}
      group by w.currency`,
    sql<{ token: string; amount: string; tx_hash: string }[]>`
      select token, amount::text, tx_hash from outbound_txs
      where purpose = 'bridge' and chain = ${chain} and state <> 'failed'
        and block_number is not null and block_number <= ${block}
      order by created_at desc limit 1`,
    sql<{ currency: string; v: string }[]>`
      select currency, sum(amount)::text as v from treasury_withdrawals
      where chain = ${chain} and state in ('signed', 'sent')
      group by currency`,
    sql<{ id: string; amount: string }[]>`
      select c.id, c.amount::text from cctp_transfers c
      join outbound_txs o on o.purpose = 'cctp_burn' and o.ref_id = c.id::text and o.step = 1
      where c.source_chain = ${chain} and c.state in ('burning', 'attesting', 'minting')
        and o.state <> 'failed' and o.block_number is not null and o.block_number <= ${block}
      order by c.created_at`,
  ])
  const legs: Leg[] = withdrawals.map((w) => ({
    side: 'asset',
    currency: w.currency,
    kind: 'withdrawal_in_flight',
    place: `${chain}:withdrawals`,
    amount: BigInt(w.v),
  }))
  for (const t of treasury)
    legs.push({
      side: 'asset',
      currency: t.currency,
      kind: 'treasury_in_flight',
      place: `${chain}:treasury`,
      amount: BigInt(t.v),
    })
  for (const t of cctp)
    legs.push({
      side: 'asset',
      currency: 'USDC',
      kind: 'cctp_in_flight',
      place: `${chain}:cctp:${t.id}`,
      amount: BigInt(t.amount),
    })
  const [bridge] = bridges
  if (bridge) {
    const key = ownTxKey({ chain, txHash: bridge.tx_hash, slot: 0 })
    if (!(await recordedKeys(sql, [key])).has(key))
      legs.push({
        side: 'asset',
        currency: bridge.token,
        kind: 'bridge_in_flight',
        place: `${chain}:bridge:${bridge.tx_hash}`,
        amount: BigInt(bridge.amount),
      })
  }
  return legs
}
