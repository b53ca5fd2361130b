/**
 * The one owner of `deposit_addresses`: every user's deposit address, derived once from its
 * hd_index and kept. The worker's deposit watch fills it in batches before it scans (its lookup of
 * which transfers are deposits); the API records an address the first time it shows one, so a
 * withdrawal to any address a user was ever shown is refused at once (docs/hostile-world.md
 * "Destinations"), whether the watch has synced it yet or not.
 */
import type { Queryable } from '@wh/db'

export interface DepositAddressRow {
  readonly hdIndex: number
  /** EIP-55, derived from hdIndex (spec 2.1 rule 2) */
  readonly address: string
  readonly userId: string
}

/** Records addresses (idempotent: an existing hd_index or address is left as it is). */
export async function recordDepositAddresses(sql: Queryable, rows: readonly DepositAddressRow[]): Promise<void> {
  if (rows.length === 0) return
  const json = rows.map((r) => ({ hd_index: r.hdIndex, address: r.address, user_id: r.userId }))
  await sql`
    insert into deposit_addresses (hd_index, address, user_id)
    select hd_index, address, user_id
    from jsonb_to_recordset(${sql.json(json)}::jsonb) as x(hd_index integer, address text, user_id uuid)
    on conflict do nothing`
}
