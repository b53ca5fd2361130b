/**
 * Every write of the deposit audit's tables (docs/chains.md "Every deposit is accounted for"):
 * `deposit_audit_cursors` (each chain's place in the rotation and the activity window),
 * `deposit_balance_audits` (each address's last reading) and `deposit_surpluses` (one row per
 * episode of ETH above the expectation: open → credited | resolved). The audit's run (run.ts,
 * the worker's `deposits-audit-<chain>` tick) reads the chain and decides; these record it.
 *
 * Each write is one statement, or one transaction that takes the episodes' row locks first
 * (`recordReadings`, `creditTracedTransfers`), so two runs never open, continue or credit one
 * episode twice.
 */
import type { Queryable, Sql } from '@wh/db'
import type { ChainName, InternalTransfer } from '@wh/wallet'
import type { BalanceReading, SurplusEpisode, SurplusReason } from '../rows'
import { recordDetected } from '../transitions'

/** The chain's audit cursor, created at `block` on its first run (an existing one is left as it is). */
export async function openAuditCursor(sql: Queryable, chain: ChainName, block: bigint): Promise<void> {
  await sql`
    insert into deposit_audit_cursors (chain, activity_block) values (${chain}, ${block.toString()})
    on conflict do nothing`
}

export interface ReadingsRecord {
  chain: ChainName
  /** the block the balances were read at */
  block: bigint
  /** where a new episode's traces start when its address has no clean reading */
  floor: bigint
  readings: readonly BalanceReading[]
  surplusAddresses: readonly string[]
  /** where the activity window ends this run, and where the rotation continues next run */
  activityTo: bigint
  rotationNext: number
  /** the rotation came back to the lowest hd_index this run */
  rotationWrapped: boolean
}

/**
 * The readings recorded, episodes opened, continued and closed, the audit cursor moved: one commit.
 * Returns the episodes it resolved (no longer above the expectation).
 */
export async function recordReadings(sql: Sql, r0: ReadingsRecord): Promise<number> {
  const { chain, block, floor, readings, surplusAddresses, activityTo, rotationNext, rotationWrapped } = r0
  const addresses = readings.map((r) => r.target.address)
  let resolved = 0
  await sql.begin(async (tx) => {
    const open = await tx<{ id: string; address: string }[]>`
      select id, address from deposit_surpluses
      where chain = ${chain} and state = 'open' and address = any(${addresses}::text[]) for update`
    const openBy = new Map(open.map((o) => [o.address, o.id]))
    const fresh = surplusAddresses.filter((a) => !openBy.has(a))
    const clean = new Map<string, string | null>()
    if (fresh.length > 0) {
      for (const r of await tx<{ address: string; clean_block: string | null }[]>`
        select address, clean_block::text from deposit_balance_audits
        where chain = ${chain} and address = any(${fresh}::text[])`)
        clean.set(r.address, r.clean_block)
    }
    const rows = readings.map((r) => ({
      address: r.target.address,
      balance: r.balance.toString(),
      expected: r.expected.toString(),
      surplus: r.surplus,
    }))
    await tx`
      insert into deposit_balance_audits (chain, address, checked_block, checked_at, balance, expected, clean_block)
      select ${chain}, x.address, ${block.toString()}, now(), x.balance, x.expected,
        case when x.surplus then null else ${block.toString()}::bigint end
      from jsonb_to_recordset(${tx.json(rows)}::jsonb) as x(address text, balance numeric, expected numeric, surplus boolean)
      on conflict (chain, address) do update set checked_block = excluded.checked_block,
        checked_at = excluded.checked_at, balance = excluded.balance, expected = excluded.expected,
        clean_block = coalesce(excluded.clean_block, deposit_balance_audits.clean_block)`
    for (const r of readings) {
      const id = openBy.get(r.target.address)
      const amount = (r.balance - r.expected).toString()
      if (r.surplus && id) {
        await tx`
          update deposit_surpluses set amount = ${amount}, readings = readings + 1,
            last_seen_block = ${block.toString()}, last_seen_at = now()
          where id = ${id}`
      } else if (r.surplus) {
        const c = clean.get(r.target.address)
        // the traces start after the last clean reading; without one, a lookback back
        const from = c !== null && c !== undefined && BigInt(c) + 1n > floor ? BigInt(c) + 1n : floor
        await tx`
          insert into deposit_surpluses (chain, address, hd_index, user_id, amount, first_seen_block, first_seen_at,
            last_seen_block, last_seen_at, trace_from_block, state)
          values (${chain}, ${r.target.address}, ${r.target.hdIndex}, ${r.target.userId}, ${amount},
            ${block.toString()}, now(), ${block.toString()}, now(), ${from.toString()}, 'open')`
      } else if (id) {
        // no longer above the expectation (a late-recorded top-up, funds moved): the episode ends
        await tx`update deposit_surpluses set state = 'resolved', closed_at = now() where id = ${id}`
        resolved++
      }
    }
    await tx`
      update deposit_audit_cursors set next_hd_index = ${rotationNext}, activity_block = ${activityTo.toString()},
        rotations = rotations + ${rotationWrapped ? 1 : 0},
        rotation_started_at = case when ${rotationWrapped} then now() else rotation_started_at end,
        updated_at = now()
      where chain = ${chain}`
  })
  return resolved
}

/**
 * The alert of an open episode, claimed once: `alerted_at` and the reason set where none was.
 * Returns whether this call claimed it (then the caller sends the alert).
 */
export async function claimSurplusAlert(sql: Queryable, episodeId: string, why: SurplusReason): Promise<boolean> {
  const [claimed] = await sql<{ id: string }[]>`
    update deposit_surpluses set alerted_at = now(), reason = ${why}
    where id = ${episodeId} and alerted_at is null and state = 'open' returning id`
  return claimed !== undefined
}

/**
 * Credits the traced transfers of `episodes` (`transfers`: each in its episode's range, above the
 * dust limit) as deposits (`recordDetected`), in one transaction with the episodes' new state,
 * taken under their row locks: an episode closed meanwhile gets nothing, and a transfer credited
 * before (a re-run) meets the deposit's unique key and the journal's and changes nothing. What
 * this run credited comes off each episode's surplus; below `minSurplus` the episode is explained.
 * Returns the deposits credited now.
 */
export async function creditTracedTransfers(
  sql: Sql,
  c: {
    chain: ChainName
    block: bigint
    minSurplus: bigint
    episodes: readonly SurplusEpisode[]
    transfers: readonly InternalTransfer[]
  },
): Promise<number> {
  const { chain, block, minSurplus, episodes } = c
  const byAddress = new Map(episodes.map((e) => [e.address.toLowerCase(), e]))
  let credited = 0
  await sql.begin(async (tx) => {
    const locked = await tx<{ id: string; state: string }[]>`
      select id, state from deposit_surpluses where id = any(${episodes.map((e) => e.id)}::uuid[]) for update`
    const stillOpen = new Set(locked.filter((l) => l.state === 'open').map((l) => l.id))
    const rows = c.transfers
      .filter((t) => stillOpen.has((byAddress.get(t.to) as SurplusEpisode).id))
      .map((t) => {
        const e = byAddress.get(t.to) as SurplusEpisode
        return {
          chain,
          tx_hash: t.txHash,
          log_index: t.logIndex,
          block_number: t.blockNumber.toString(),
          user_id: e.user_id,
          hd_index: e.hd_index,
          address: e.address,
          token: 'ETH',
          amount: t.valueWei.toString(),
        }
      })
    const detected = await recordDetected(tx, rows)
    credited = detected.detected
    // each episode: what this run credited comes off its surplus (a transfer credited before is
    // already in the expected balance); below the minimum, the episode is explained
    const newly = new Map<string, bigint>()
    for (const r of detected.inserted) newly.set(r.address, (newly.get(r.address) ?? 0n) + BigInt(r.amount))
    for (const e of episodes) {
      if (!stillOpen.has(e.id)) continue
      const got = newly.get(e.address) ?? 0n
      const left = BigInt(e.amount) - got
      await tx`
        update deposit_surpluses set traced_to_block = ${block.toString()},
          credited_amount = credited_amount + ${got.toString()}, amount = ${left.toString()},
          state = case when ${left < minSurplus} then 'credited' else 'open' end,
          closed_at = case when ${left < minSurplus} then now() else null end
        where id = ${e.id}`
    }
  })
  return credited
}
