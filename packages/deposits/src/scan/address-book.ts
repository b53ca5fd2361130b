/**
 * The deposit watch's address book: every user's deposit address, derived once from hd_index
 * (spec 2.1 rule 2) and kept in deposit_addresses, and the in-memory lookup the scan matches
 * transfers against. Not a processor: the scan tick calls it before every scan.
 *
 * Why the scan syncs first: a user can deposit the moment the API shows the address. If the scan
 * read blocks before that user's address was in its lookup, it would pass over the deposit and
 * the cursor would move on. The scan therefore reads the head, then syncs every user existing at
 * that point into deposit_addresses and its lookup, and only then scans up to that head.
 */
import type { Sql } from '@wh/db'
import { type DepositKeyring, recordDepositAddresses } from '@wh/wallet'

/** Users derived and inserted per batch (TIGER_STYLE: a bound on everything). */
export const ADDRESS_SYNC_BATCH = 5_000
/** Rows read into the lookup per query when it loads incrementally. */
export const ADDRESS_LOAD_PAGE = 20_000

/**
 * Derives and stores the deposit addresses of up to `batch` users that have none yet, lowest
 * hd_index first. Returns how many it inserted; fewer than `batch` means none is missing.
 */
export async function syncDepositAddresses(
  sql: Sql,
  keyring: DepositKeyring,
  batch: number = ADDRESS_SYNC_BATCH,
): Promise<{ inserted: number; complete: boolean }> {
  const missing = await sql<{ id: string; hd_index: number }[]>`
    select u.id, u.hd_index from users u
    where not exists (select 1 from deposit_addresses d where d.hd_index = u.hd_index)
    order by u.hd_index limit ${batch}
  `
  if (missing.length === 0) return { inserted: 0, complete: true }
  // derived from the public half only: an address needs no private key
  await recordDepositAddresses(
    sql,
    missing.map((u) => ({ hdIndex: u.hd_index, address: keyring.address(u.hd_index), userId: u.id })),
  )
  return { inserted: missing.length, complete: missing.length < batch }
}

/**
 * The in-memory lookup lowercase address → hd_index, loaded from deposit_addresses and then
 * incrementally: a refresh reads only rows with an hd_index above the highest it holds. hd_index
 * comes from a sequence but rows may commit out of order, so when the table holds more rows than
 * the lookup after that, the refresh also reads the rows below the mark it is missing (rare:
 * a cheap count decides). One per process, shared by the four chains' scans.
 */
export class DepositAddressBook {
  readonly #byAddress = new Map<string, number>()
  #maxHdIndex = -1

  get size(): number {
    return this.#byAddress.size
  }

  /** hd_index of a lowercase address, for scanDeposits' isDepositAddress */
  readonly lookup = (lowercaseAddress: string): number | undefined => this.#byAddress.get(lowercaseAddress)

  /** Loads what is new; returns the number of addresses added. */
  async refresh(sql: Sql): Promise<number> {
    let added = 0
    for (;;) {
      const rows = await sql<{ hd_index: number; address: string }[]>`
        select hd_index, address from deposit_addresses
        where hd_index > ${this.#maxHdIndex} order by hd_index limit ${ADDRESS_LOAD_PAGE}
      `
      for (const r of rows) {
        if (!this.#byAddress.has(r.address.toLowerCase())) added++
        this.#byAddress.set(r.address.toLowerCase(), r.hd_index)
        this.#maxHdIndex = r.hd_index
      }
      if (rows.length < ADDRESS_LOAD_PAGE) break
    }
    const [{ n }] = (await sql`select count(*)::int as n from deposit_addresses`) as unknown as [{ n: number }]
    if (n > this.#byAddress.size) {
      // rows that committed below the mark after it moved past them: read the gaps once
      let after = -1
      for (;;) {
        const rows = await sql<{ hd_index: number; address: string }[]>`
          select hd_index, address from deposit_addresses
          where hd_index > ${after} and hd_index <= ${this.#maxHdIndex} order by hd_index limit ${ADDRESS_LOAD_PAGE}
        `
        for (const r of rows) {
          if (!this.#byAddress.has(r.address.toLowerCase())) {
            this.#byAddress.set(r.address.toLowerCase(), r.hd_index)
            added++
          }
          after = r.hd_index
        }
        if (rows.length < ADDRESS_LOAD_PAGE) break
      }
    }
    return added
  }
}
