/**
 * The deposit audit's two writes around its read (docs/chains.md "Every deposit is accounted for"):
 * which addresses a run reads, and the readings recorded with their surplus episodes and the audit
 * cursor's move, in one commit. audit.ts reads the balances and explains the surpluses.
 */
import type { ChainName } from '@wh/wallet'
import {
  AUDIT_PRIORITY_BATCH,
  AUDIT_ROTATION_BATCH,
  type DepositAuditDeps,
  type DepositAuditOptions,
  type DepositAuditResult,
  type Target,
} from './audit'

export interface Picked {
  readonly targets: Map<string, Target>
  /** where the activity window ends this run, and where the rotation continues next run */
  readonly activityTo: bigint
  readonly rotationNext: number
}

/**
 * Which addresses this run reads: open episodes first (at most half the priority batch), then the
 * addresses with activity since the last run, earliest first, then the next of the rotation.
 */
export async function pickTargets(
  sql: DepositAuditDeps['sql'],
  chain: ChainName,
  block: bigint,
  opts: DepositAuditOptions,
  result: DepositAuditResult,
): Promise<Picked> {
  await sql`
    insert into deposit_audit_cursors (chain, activity_block) values (${chain}, ${block.toString()})
    on conflict do nothing`
  const [ac] = await sql<{ next_hd_index: number; activity_block: string }[]>`
    select next_hd_index, activity_block from deposit_audit_cursors where chain = ${chain}`
  const nextHd = (ac as { next_hd_index: number }).next_hd_index
  const activityFrom = BigInt((ac as { activity_block: string }).activity_block)
  const priorityBatch = opts.priorityBatch ?? AUDIT_PRIORITY_BATCH
  const rotationBatch = opts.rotationBatch ?? AUDIT_ROTATION_BATCH

  const targets = new Map<string, Target>()
  const take = (rows: readonly { hd_index: number; address: string; user_id: string }[]) => {
    for (const r of rows) {
      if (!targets.has(r.address))
        targets.set(r.address, { hdIndex: r.hd_index, address: r.address, userId: r.user_id })
    }
  }
  // open episodes first (at most half the priority batch, so activity is never starved)
  take(
    await sql<{ hd_index: number; address: string; user_id: string }[]>`
      select hd_index, address, user_id from deposit_surpluses where chain = ${chain} and state = 'open'
      order by last_seen_block limit ${Math.ceil(priorityBatch / 2)}`,
  )
  // then addresses with activity since the last tick, earliest first
  let activityTo = activityFrom
  const limit = priorityBatch - targets.size
  if (block > activityFrom && limit > 0) {
    const active = await sql<{ hd_index: number; address: string; user_id: string; first_block: string }[]>`
      with act as (
        select address, block_number as b from deposits
        where chain = ${chain} and block_number > ${activityFrom.toString()} and block_number <= ${block.toString()}
        union all
        select x.address, o.block_number from outbound_txs o
          cross join lateral (values (o.from_address), (o.to_address)) as x(address)
        where o.chain = ${chain} and o.block_number > ${activityFrom.toString()} and o.block_number <= ${block.toString()}
      )
      select a.hd_index, a.address, a.user_id, min(act.b)::text as first_block
      from act join deposit_addresses a on a.address = act.address
      group by a.hd_index, a.address, a.user_id
      order by min(act.b), a.hd_index limit ${limit}`
    take(active)
    // a full batch may have left addresses of its last block out: the rotation reads them later
    activityTo = active.length >= limit && active.length > 0 ? BigInt(active.at(-1)?.first_block as string) : block
  }
  result.priority = targets.size
  // the rotation: the next rotationBatch addresses by hd_index, continuing from the lowest when it
  // reaches the end, so every tick reads a full batch and each address comes back every
  // ⌈addresses / rotationBatch⌉ ticks
  const rotation = await sql<{ hd_index: number; address: string; user_id: string }[]>`
    select hd_index, address, user_id from deposit_addresses where hd_index >= ${nextHd}
    order by hd_index limit ${rotationBatch}`
  if (rotation.length < rotationBatch) {
    result.rotationWrapped = true
    rotation.push(
      ...(await sql<{ hd_index: number; address: string; user_id: string }[]>`
        select hd_index, address, user_id from deposit_addresses where hd_index < ${nextHd}
        order by hd_index limit ${rotationBatch - rotation.length}`),
    )
  }
  take(rotation)
  result.rotation = rotation.length
  const rotationNext = rotation.length === 0 ? 0 : (rotation.at(-1) as { hd_index: number }).hd_index + 1
  return { targets, activityTo, rotationNext }
}

export interface Reading {
  target: Target
  balance: bigint
  expected: bigint
  surplus: boolean
}

/** The readings recorded, episodes opened, continued and closed, the audit cursor moved: one commit. */
export async function recordReadings(
  sql: DepositAuditDeps['sql'],
  r0: {
    chain: ChainName
    block: bigint
    floor: bigint
    readings: readonly Reading[]
    surplusAddresses: readonly string[]
    picked: Picked
  },
  result: DepositAuditResult,
): Promise<void> {
  const { chain, block, floor, readings, surplusAddresses } = r0
  const addresses = readings.map((r) => r.target.address)
  const { activityTo, rotationNext } = r0.picked
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
        result.resolved++
      }
    }
    await tx`
      update deposit_audit_cursors set next_hd_index = ${rotationNext}, activity_block = ${activityTo.toString()},
        rotations = rotations + ${result.rotationWrapped ? 1 : 0},
        rotation_started_at = case when ${result.rotationWrapped} then now() else rotation_started_at end,
        updated_at = now()
      where chain = ${chain}`
  })
}
