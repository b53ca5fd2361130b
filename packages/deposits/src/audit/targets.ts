/**
 * Which addresses a run of the deposit audit reads (docs/chains.md "Every deposit is accounted
 * for"). run.ts reads their balances and explains the surpluses; the readings, episodes and the
 * audit cursor are written by store.ts.
 */
import type { ChainName } from '@wh/wallet'
import type { AuditTarget } from '../rows'
import { openAuditCursor } from './store'
import {
  AUDIT_PRIORITY_BATCH,
  AUDIT_ROTATION_BATCH,
  type DepositAuditDeps,
  type DepositAuditOptions,
  type DepositAuditResult,
} from './types'

export interface Picked {
  readonly targets: Map<string, AuditTarget>
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
  await openAuditCursor(sql, chain, block)
  const [ac] = await sql<{ next_hd_index: number; activity_block: string }[]>`
    select next_hd_index, activity_block from deposit_audit_cursors where chain = ${chain}`
  const nextHd = (ac as { next_hd_index: number }).next_hd_index
  const activityFrom = BigInt((ac as { activity_block: string }).activity_block)
  const priorityBatch = opts.priorityBatch ?? AUDIT_PRIORITY_BATCH
  const rotationBatch = opts.rotationBatch ?? AUDIT_ROTATION_BATCH

  const targets = new Map<string, AuditTarget>()
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
