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
