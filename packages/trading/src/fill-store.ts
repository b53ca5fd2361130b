/**
 * The fills' rows (docs/trading.md "Placing" step 5, docs/exchange.md "Fee collection"): the one
 * writer of `position_fills` (test/table-owners.test.ts). A fill is recorded once, keyed by its
 * trade id, in the transaction of its `option_sold` (the worker's fills ingestion); then the fee
 * collection claims the platform's fee of unclaimed fills for a withdraw (`fee_transfer_id`),
 * marks them collected when it settles (`fee_collected_at`), or releases them when it failed.
 * Each function is one statement; those that take a `tx` are a step of the caller's transaction.
 */
import type { Queryable } from '@wh/db'

/** A fill to record, signed by side (a buy-back's amount and premium negative), as the insert takes it. */
export interface FillRecord {
  trade_id: string
  position_id: string
  amount_e18: string
  price_e18: string
  premium: string
  exchange_fee: string
  platform_fee: string
  /** ISO */
  traded_at: string
  /** ISO; a buy-back's is its trade time (no platform fee to collect) */
  fee_collected_at: string | null
}

/** A fill the insert recorded (not one recorded before), with its fees added up. */
export interface RecordedFill {
  position_id: string
  amount_e18: string
  premium: string
  fees: string
}

/** Records the subaccount's new fills; a trade already recorded is skipped (and not returned). */
export async function recordFillRows(
  tx: Queryable,
  sub: { id: string; userId: string },
  rows: readonly FillRecord[],
): Promise<RecordedFill[]> {
  return tx<RecordedFill[]>`
      insert into position_fills (trade_id, position_id, user_id, subaccount_id, amount_e18, price_e18, premium,
        exchange_fee, platform_fee, traded_at, fee_collected_at)
      select x.trade_id, x.position_id, ${sub.userId}, ${sub.id}, x.amount_e18, x.price_e18, x.premium,
        x.exchange_fee, x.platform_fee, x.traded_at, x.fee_collected_at
      from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as x(trade_id text, position_id uuid,
        amount_e18 numeric, price_e18 numeric, premium numeric, exchange_fee numeric, platform_fee numeric,
        traded_at timestamptz, fee_collected_at timestamptz)
      on conflict (trade_id) do nothing
      returning position_id, amount_e18::text, premium::text, (exchange_fee + platform_fee)::text as fees`
}

/** claimed → unclaimed: the fills of fee withdraws that failed in a run that died before releasing them. */
export async function releaseFailedFeeClaims(sql: Queryable): Promise<void> {
  await sql`
    update position_fills f set fee_transfer_id = null
    from subaccount_transfers t
    where f.fee_collected_at is null and f.fee_transfer_id = t.id and t.kind = 'fee' and t.state = 'failed'`
}

/**
 * unclaimed → claimed by the fee withdraw `transferId`: those of `tradeIds` still unclaimed and
 * uncollected, with their platform fees (the caller checks they are all of them).
 */
export async function claimFeeFills(
  tx: Queryable,
  c: { subaccountId: string; tradeIds: readonly string[]; transferId: string },
): Promise<{ platform_fee: string }[]> {
  return tx<{ platform_fee: string }[]>`
        update position_fills set fee_transfer_id = ${c.transferId}
        where subaccount_id = ${c.subaccountId} and trade_id = any(${c.tradeIds as string[]}::text[])
          and fee_collected_at is null and fee_transfer_id is null
        returning platform_fee::text`
}

/** claimed → collected: the fee withdraw `transferId` settled (in its settling transaction). */
export async function markFeesCollected(tx: Queryable, transferId: string, at: Date): Promise<void> {
  await tx`update position_fills set fee_collected_at = ${at}
        where fee_transfer_id = ${transferId} and fee_collected_at is null`
}

/** claimed → unclaimed: the fee withdraw `transferId` failed, nothing moved; a later one claims them. */
export async function releaseFeeClaim(sql: Queryable, transferId: string): Promise<void> {
  await sql`update position_fills set fee_transfer_id = null
    where fee_transfer_id = ${transferId} and fee_collected_at is null`
}

/**
 * The platform's fees recorded on the subaccount's fills but still held in the user's subaccount
 * at the exchange (not yet collected to the platform's), per currency: reconciliation adds them to
 * the journal side, since the journal already moved them to PLATFORM_FEE_REVENUE.
 */
export async function uncollectedPlatformFees(sql: Queryable, subaccountRowId: string): Promise<Map<string, bigint>> {
  const [r] = await sql<{ v: string }[]>`
    select coalesce(sum(platform_fee), 0)::text as v from position_fills
    where subaccount_id = ${subaccountRowId} and fee_collected_at is null`
  const v = BigInt(r?.v ?? '0')
  return v === 0n ? new Map() : new Map([['USDC', v]])
}
