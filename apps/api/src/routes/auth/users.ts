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

/**
 * The create half of find-or-create: insert, do nothing on conflict, re-read (spec 2.1 rule 1). A
 * user whose first sign-in was a contract account's is created bound to the chain it was verified on
 * (`contractChainId`); one who signed with a key, bound to none.
 */
export async function createUser(
  sql: Sql,
  walletAddress: string,
  contractChainId: number | null = null,
): Promise<UserRow & { contractChainId: number | null }> {
  const inserted = await sql<(UserRow & { contractChainId: number | null })[]>`
    insert into users (wallet_address, contract_chain_id) values (${walletAddress}, ${contractChainId})
    on conflict (wallet_address) do nothing
    returning id, hd_index as "hdIndex", contract_chain_id as "contractChainId"`
  if (inserted[0]) return inserted[0]
  const reread = await sql<(UserRow & { contractChainId: number | null })[]>`
    select id, hd_index as "hdIndex", contract_chain_id as "contractChainId" from users
    where wallet_address = ${walletAddress}`
  if (!reread[0]) throw new Error('user vanished between insert and re-read')
  return reread[0]
}

/**
 * Binds user `id` to `chainId` for contract signatures if it is bound to none yet (its first
 * contract sign-in, docs/architecture.md "Sign-in"); returns the chain it is bound to afterwards.
 */
export async function bindContractChain(sql: Sql, id: string, chainId: number): Promise<number | null> {
  const [row] = await sql<{ bound: number | null }[]>`
    with bound as (
      update users set contract_chain_id = ${chainId} where id = ${id} and contract_chain_id is null
      returning contract_chain_id
    )
    select coalesce((select contract_chain_id from bound), (select contract_chain_id from users where id = ${id})) as bound`
  return row?.bound ?? null
}
