/**
 * A chain whose deposit watch halted on a reorg past its cursor (docs/hostile-world.md "Chains are
 * who they say they are"): what happened, and the operator's way out.
 *
 * `inspectHalt` lists the deposits credited from the blocks the reorg may have replaced, each with
 * whether its transaction is still in the canonical chain in the same block: a deposit credited
 * from a block that no longer holds it may be money the platform does not have (its journal entry
 * stays; a correction is a decision for the operator, never an automatic delete). `resumeChain`
 * sets the cursor back to a block the operator names and lifts the halt; the blocks from there are
 * scanned again, and deposits already credited are a no-op by their keys.
 */
import type { Queryable, Sql } from '@wh/db'
import { type ChainClients, type ChainName, listCursors, resumeCursor } from '@wh/wallet'
import { type Hex, numberToHex, TransactionReceiptNotFoundError } from 'viem'
import { recordOperatorAction } from './actions'

/** How far below a halted cursor deposits are looked at by default (deeper than any chain's reorgs seen). */
export const HALT_INSPECT_BLOCKS = 1_000n

export interface InspectedDeposit {
  readonly depositId: string
  readonly userId: string
  readonly txHash: string
  readonly logIndex: number
  readonly blockNumber: string
  readonly token: string
  readonly amount: string
  readonly state: string
  /** 'canonical': still in that block; 'vanished': no such transaction now; 'moved': in another block */
  readonly onChain: 'canonical' | 'vanished' | 'moved'
}

export interface HaltReport {
  readonly chain: ChainName
  readonly haltedAt: Date | null
  readonly haltReason: string | null
  readonly nextBlock: string
  readonly deposits: readonly InspectedDeposit[]
}

/**
 * The deposits of `chain` credited at or above `fromBlock` (default: the cursor − HALT_INSPECT_BLOCKS),
 * each checked against the chain now.
 */
export async function inspectHalt(
  sql: Sql,
  client: ChainClients['publicClient'],
  chain: ChainName,
  fromBlock?: bigint,
): Promise<HaltReport> {
  const cursor = (await listCursors(sql)).find((c) => c.chain === chain)
  if (!cursor) throw new Error(`no cursor for ${chain}`)
  const from = fromBlock ?? (cursor.nextBlock > HALT_INSPECT_BLOCKS ? cursor.nextBlock - HALT_INSPECT_BLOCKS : 0n)
  const rows = await sql<
    {
      id: string
      user_id: string
      tx_hash: string
      log_index: string
      block_number: string
      token: string
      amount: string
      state: string
    }[]
  >`
    select id, user_id, tx_hash, log_index::text, block_number::text, token, amount::text, state from deposits
    where chain = ${chain} and block_number >= ${from.toString()}
    order by block_number, tx_hash, log_index limit 10000`
  const deposits: InspectedDeposit[] = []
  for (const r of rows) {
    let onChain: InspectedDeposit['onChain']
    try {
      const receipt = await client.getTransactionReceipt({ hash: r.tx_hash as Hex })
      onChain = receipt.blockNumber === BigInt(r.block_number) ? 'canonical' : 'moved'
    } catch (e) {
      if (!(e instanceof TransactionReceiptNotFoundError)) throw e
      onChain = 'vanished'
    }
    deposits.push({
      depositId: r.id,
      userId: r.user_id,
      txHash: r.tx_hash,
      logIndex: Number(r.log_index),
      blockNumber: r.block_number,
      token: r.token,
      amount: r.amount,
      state: r.state,
      onChain,
    })
  }
  return {
    chain,
    haltedAt: cursor.haltedAt,
    haltReason: cursor.haltReason,
    nextBlock: cursor.nextBlock.toString(),
    deposits,
  }
}

/** What resuming a halted chain needs from the chain: the block to scan from and the hash of the one below. */
export interface ResumePoint {
  readonly chain: ChainName
  readonly fromBlock: bigint
  readonly belowHash: Hex | null
  readonly haltReason: string | null
}

/**
 * Where a halted `chain` would resume (`fromBlock`, default: where the cursor stands) and the hash
 * of the block below it, read from the chain; undefined when the chain is not halted.
 */
export async function resumePoint(
  sql: Sql,
  client: ChainClients['publicClient'],
  chain: ChainName,
  fromBlock?: bigint,
): Promise<ResumePoint | undefined> {
  const cursor = (await listCursors(sql)).find((c) => c.chain === chain)
  if (!cursor?.haltedAt) return undefined
  const from = fromBlock ?? cursor.nextBlock
  const below =
    from > 0n
      ? ((
          (await client.request({ method: 'eth_getBlockByNumber', params: [numberToHex(from - 1n), false] })) as {
            hash?: Hex
          } | null
        )?.hash ?? null)
      : null
  return { chain, fromBlock: from, belowHash: below, haltReason: cursor.haltReason }
}

/**
 * Lifts the halt at `point` in the caller's transaction, recording who and why. Returns false when
 * the chain was not halted (any more). Resuming credits deposits again: the desk and the CLI run it
 * as an approved proposal (proposals.ts).
 */
export async function resumeChainIn(
  tx: Queryable,
  point: ResumePoint,
  r: { reason: string; actor: string; details?: Record<string, unknown> },
): Promise<boolean> {
  const resumed = await resumeCursor(tx, point.chain, point.fromBlock, point.belowHash)
  if (resumed)
    await recordOperatorAction(tx, {
      action: 'chain_resumed',
      subject: point.chain,
      actor: r.actor,
      reason: r.reason,
      details: { fromBlock: point.fromBlock.toString(), haltReason: point.haltReason, ...r.details },
    })
  return resumed
}

/**
 * Lifts the halt of `chain` and scans again from `fromBlock` (default: where the cursor stands),
 * recording who and why, in one transaction. Returns false when the chain was not halted.
 */
export async function resumeChain(
  sql: Sql,
  client: ChainClients['publicClient'],
  r: { chain: ChainName; fromBlock?: bigint; reason: string; actor: string },
): Promise<boolean> {
  const point = await resumePoint(sql, client, r.chain, r.fromBlock)
  if (!point) return false
  return sql.begin((tx) => resumeChainIn(tx, point, r))
}
