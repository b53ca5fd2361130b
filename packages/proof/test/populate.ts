/**
 * A ledger with users in it, written through the ledger's own append (deposits, fundings of
 * subaccounts, fills, withdrawals, a reconciliation adjustment), for the publication's tests.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { appendBatch, type EventInput, parseAccount, type Queryable } from '@wh/ledger'

const txHash = () => `0x${randomBytes(32).toString('hex')}`

/** One user's history: USDC and ETH deposits, a USDC funding, a premium, an ETH withdrawal. */
export function historyOf(userId: string, n: number, at: Date): EventInput[] {
  const sub = `S-${userId.slice(0, 8)}`
  const usdc = BigInt(1_000 + n) * 1_000_000n
  const eth = BigInt(n + 1) * 10n ** 16n
  return [
    {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount: usdc },
      occurredAt: at,
    },
    {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: txHash(), logIndex: 1, currency: 'ETH', amount: eth },
      occurredAt: at,
    },
    {
      type: 'subaccount_funded',
      payload: { userId, subaccountId: sub, transactionId: `f-${userId}`, currency: 'USDC', amount: usdc / 2n },
      occurredAt: at,
    },
    {
      type: 'option_sold',
      payload: {
        userId,
        subaccountId: sub,
        tradeId: `t-${userId}`,
        instrument: 'ETH-20260130-3000-P',
        currency: 'USDC',
        premium: 7_000_000n + BigInt(n),
        exchangeFee: 100_000n,
        platformFee: 200_000n,
      },
      occurredAt: at,
    },
    {
      type: 'withdrawal_sent',
      payload: {
        userId,
        withdrawalId: `w-${userId}`,
        chain: 'base',
        txHash: txHash(),
        currency: 'ETH',
        amount: eth / 4n,
      },
      occurredAt: at,
    },
  ]
}

/** `count` users with a history each; returns their ids. */
export async function populate(sql: Queryable, count: number, at = new Date()): Promise<string[]> {
  const users = Array.from({ length: count }, () => randomUUID())
  await appendBatch(
    sql,
    users.flatMap((u, i) => historyOf(u, i, at)),
  )
  return users
}

/**
 * A reconciliation adjustment that takes `userId`'s subaccount `sub` below zero in `currency`
 * (with nothing in transit in that currency, the user's total goes negative).
 */
export function negativeAdjustment(userId: string, sub: string, currency: string, delta: bigint): EventInput {
  return {
    type: 'reconciliation_adjustment',
    payload: { userId, subaccountId: sub, currency, bucket: 1_700_000_000, delta },
    occurredAt: new Date(),
  }
}

/**
 * Per currency, what users hold in transit and subaccounts, summed from the journal's postings (not
 * from ledger_balances, which the publication reads): each user's total, a negative one counted 0.
 */
export async function ledgerTotals(sql: Queryable): Promise<Record<string, string>> {
  const rows = await sql<{ account: string; currency: string; v: string }[]>`
    select account, currency, sum(amount) as v from ledger_postings group by account, currency`
  const perUser = new Map<string, bigint>()
  for (const r of rows) {
    const p = parseAccount(r.account)
    if (p?.bearer !== 'user' || (p.family !== 'transit' && p.family !== 'sub')) continue
    const k = `${p.userId}|${r.currency}`
    perUser.set(k, (perUser.get(k) ?? 0n) + BigInt(r.v))
  }
  const out: Record<string, bigint> = {}
  for (const [k, v] of perUser) {
    const c = k.split('|')[1] as string
    out[c] = (out[c] ?? 0n) + (v < 0n ? 0n : v)
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([c, v]) => [c, v.toString()]),
  )
}
