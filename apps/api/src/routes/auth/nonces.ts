import { randomBytes } from 'node:crypto'
import { NONCE_TTL_MS } from '@wh/config'
import type { Sql } from '@wh/db'

/** 128 random bits as 32 hex characters: alphanumeric, within EIP-4361's 8+ and our 64. */
export function newNonce(): string {
  return randomBytes(16).toString('hex')
}

/** spec 2.2: stored with expires_at = issued_at + 5 minutes. */
export async function issueNonce(sql: Sql, now: Date): Promise<string> {
  const nonce = newNonce()
  const expiresAt = new Date(now.getTime() + NONCE_TTL_MS)
  await sql`insert into siwe_nonces (nonce, issued_at, expires_at) values (${nonce}, ${now}, ${expiresAt})`
  return nonce
}

/**
 * spec 3.1: one atomic conditional update. Of concurrent redemptions of one nonce exactly
 * one gets the row back; an unknown, used or expired nonce gets nothing.
 */
export async function redeemNonce(sql: Sql, nonce: string, now: Date): Promise<boolean> {
  const rows = await sql`
    update siwe_nonces set used_at = ${now}
    where nonce = ${nonce} and used_at is null and expires_at > ${now}
    returning nonce`
  return rows.length === 1
}

/**
 * Before a contract account's signature is asked of a chain (docs/architecture.md "Sign-in"): whether
 * `nonce` exists, is unused and has not expired, and the chain `walletAddress`'s user is bound to
 * (null: none, or no user yet). A read: the nonce is redeemed only after the signature passed.
 */
export async function contractSignInPrecheck(
  sql: Sql,
  nonce: string,
  walletAddress: string,
  now: Date,
): Promise<{ usable: boolean; boundChainId: number | null }> {
  const [row] = await sql<{ usable: boolean; bound: number | null }[]>`
    select exists (select 1 from siwe_nonces where nonce = ${nonce} and used_at is null and expires_at > ${now}) as usable,
      (select contract_chain_id from users where wallet_address = ${walletAddress}) as bound`
  return { usable: row?.usable ?? false, boundChainId: row?.bound ?? null }
}

export interface Redemption {
  readonly redeemed: boolean
  /** the wallet's user when it already exists; read in the same statement, used only if redeemed */
  readonly user: { id: string; hdIndex: number; contractChainId: number | null } | undefined
}

interface Pending {
  nonce: string
  walletAddress: string
  resolve: (r: Redemption) => void
  reject: (e: unknown) => void
}

/** Redemptions that share one round trip at most. */
export const MAX_REDEMPTION_BATCH = 256
/**
 * Redemption statements in flight at once. While they are, new redemptions wait for one to return
 * and then share the next statement (a group commit): under load a batch grows with the wait
 * instead of every turn of the event loop sending its own, and an idle server still sends at once.
 */
export const MAX_REDEMPTIONS_IN_FLIGHT = 2

/**
 * The sign-in hot path: burns nonces (the same conditional update as redeemNonce) and, in the
 * same statement, reads each wallet's existing user. Redemptions that arrive in the same turn
 * of the event loop share one statement, so under load a sign-in costs a fraction of a round
 * trip (an application-level group commit).
 *
 * Why this keeps spec 3.1 and 4.1: each nonce still flips from unused to used in one atomic
 * conditional UPDATE, so of concurrent redemptions across processes exactly one gets the row.
 * Within one batch a second request carrying the same nonce is refused outright, as it could
 * never win. The user read has no effect and its result is used only for a redeemed nonce, so
 * no user is created or returned before the redemption (steps 2 then 3).
 */
export class NonceRedeemer {
  readonly #sql: Sql
  readonly #now: () => Date
  #pending: Pending[] = []
  #inBatch = new Set<string>()
  #scheduled = false
  #inFlight = 0

  constructor(sql: Sql, now: () => Date) {
    this.#sql = sql
    this.#now = now
  }

  redeem(nonce: string, walletAddress: string): Promise<Redemption> {
    if (this.#inBatch.has(nonce)) return Promise.resolve({ redeemed: false, user: undefined })
    return new Promise<Redemption>((resolve, reject) => {
      this.#pending.push({ nonce, walletAddress, resolve, reject })
      this.#inBatch.add(nonce)
      if (this.#pending.length >= MAX_REDEMPTION_BATCH) this.#flush()
      else this.#schedule()
    })
  }

  /** A flush on the next turn, unless one is due or the statements in flight will call it on return. */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= MAX_REDEMPTIONS_IN_FLIGHT) return
    this.#scheduled = true
    setImmediate(() => this.#flush())
  }

  #flush(): void {
    this.#scheduled = false
    const batch = this.#pending
    if (batch.length === 0) return
    // a full batch goes at once; a partial one waits while the statements in flight are at their bound
    if (batch.length < MAX_REDEMPTION_BATCH && this.#inFlight >= MAX_REDEMPTIONS_IN_FLIGHT) return
    this.#inFlight++
    this.#pending = []
    this.#inBatch = new Set()
    const now = this.#now()
    const nonces = batch.map((p) => p.nonce)
    const addresses = batch.map((p) => p.walletAddress)
    this.#sql<{ nonce: string; id: string | null; hd_index: number | null; contract_chain_id: number | null }[]>`
      with redeemed as (
        update siwe_nonces set used_at = ${now}
        where nonce = any(${nonces}::text[]) and used_at is null and expires_at > ${now}
        returning nonce
      )
      select r.nonce, u.id, u.hd_index, u.contract_chain_id
      from redeemed r
      join unnest(${nonces}::text[], ${addresses}::text[]) as req(nonce, address) on req.nonce = r.nonce
      left join users u on u.wallet_address = req.address`
      .then(
        (rows) => {
          const byNonce = new Map(rows.map((r) => [r.nonce, r]))
          for (const p of batch) {
            const row = byNonce.get(p.nonce)
            p.resolve(
              row
                ? {
                    redeemed: true,
                    user:
                      row.id === null
                        ? undefined
                        : { id: row.id, hdIndex: row.hd_index as number, contractChainId: row.contract_chain_id },
                  }
                : { redeemed: false, user: undefined },
            )
          }
        },
        (err) => {
          for (const p of batch) p.reject(err)
        },
      )
      .finally(() => {
        this.#inFlight--
        // what arrived meanwhile goes in the next statement
        if (this.#pending.length > 0) this.#schedule()
      })
  }
}
