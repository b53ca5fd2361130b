/**
 * The platform's own addresses (the one owner of `platform_wallets`). The worker holds the keys and
 * registers their addresses at start; the API, which holds no key, reads them to refuse a
 * withdrawal to one of them (docs/hostile-world.md "Destinations"): money sent there would leave
 * the user's balance and land in the platform's, a loss the user never meant and the ledger never
 * sees as theirs.
 */
import type { Queryable } from '@wh/db'
import { type Address, getAddress } from 'viem'

export type PlatformWalletRole = 'hot' | 'gas' | 'swap' | 'exchange'

export interface PlatformWallet {
  readonly address: Address
  readonly role: PlatformWalletRole
}

/**
 * Records the addresses this deployment's keys control (idempotent: a restart upserts the same).
 *
 * @example
 *   await registerPlatformWallets(sql, [{ address: hot.address, role: 'hot' }, { address: gas.address, role: 'gas' }])
 */
export async function registerPlatformWallets(sql: Queryable, wallets: readonly PlatformWallet[]): Promise<void> {
  if (wallets.length === 0) return
  const rows = wallets.map((w) => ({ address: getAddress(w.address), role: w.role }))
  await sql`
    insert into platform_wallets (address, role)
    select address, role from jsonb_to_recordset(${sql.json(rows)}::jsonb) as x(address text, role text)
    on conflict (address) do update set role = excluded.role, updated_at = now()
      where platform_wallets.role is distinct from excluded.role`
}

/** Every registered platform address, lowercase, with its role. */
export async function loadPlatformWallets(sql: Queryable): Promise<ReadonlyMap<string, PlatformWalletRole>> {
  const rows = await sql<{ address: string; role: PlatformWalletRole }[]>`select address, role from platform_wallets`
  return new Map(rows.map((r) => [r.address.toLowerCase(), r.role]))
}
