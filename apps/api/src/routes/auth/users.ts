import type { Sql } from '@wh/db'

export interface UserRow {
  id: string
  hdIndex: number
}

/**
 * spec 2.1 rule 1: the address arrives EIP-55 normalised. A returning user is one read.
 * A new one is inserted with do-nothing-on-conflict and re-read: a concurrent first sign-in
 * of the same address finds the row the other one created. Reading first also keeps
 * hd_index dense: nextval() runs on every INSERT attempt, even one that conflicts, and gaps
 * in the index would defeat the gap limit wallets use to rediscover addresses.
 */
export async function findOrCreateUser(sql: Sql, walletAddress: string): Promise<UserRow> {
  const found = await sql<UserRow[]>`
    select id, hd_index as "hdIndex" from users where wallet_address = ${walletAddress}`
  return found[0] ?? createUser(sql, walletAddress)
}

/** The create half of find-or-create: insert, do nothing on conflict, re-read (spec 2.1 rule 1). */
export async function createUser(sql: Sql, walletAddress: string): Promise<UserRow> {
  const inserted = await sql<UserRow[]>`
    insert into users (wallet_address) values (${walletAddress})
    on conflict (wallet_address) do nothing
    returning id, hd_index as "hdIndex"`
  if (inserted[0]) return inserted[0]
  const reread = await sql<UserRow[]>`
    select id, hd_index as "hdIndex" from users where wallet_address = ${walletAddress}`
  if (!reread[0]) throw new Error('user vanished between insert and re-read')
  return reread[0]
}
