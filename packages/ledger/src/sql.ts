import type postgres from 'postgres'

/**
 * What the ledger's functions run on: the pool, or a transaction the caller opened with
 * `sql.begin` (so an append can commit together with the caller's own rows).
 */
export type Queryable = postgres.Sql | postgres.TransactionSql

/** numeric(78,0) arrives as a string from postgres.js; money is bigint in code. */
export function toBigInt(value: string | number | bigint | null | undefined): bigint {
  if (value === null || value === undefined) return 0n
  return BigInt(value)
}

/**
 * The JSON form of a value: bigints become decimal strings, never a JS number near an amount.
 * A plain walk instead of a JSON.stringify replacer: the append encodes every payload, and the
 * replacer costs several times more.
 */
export function toJsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(toJsonValue)
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {}
    for (const k in value) out[k] = toJsonValue((value as Record<string, unknown>)[k])
    return out
  }
  return value
}

export function toJson(value: unknown): string {
  return JSON.stringify(toJsonValue(value))
}
