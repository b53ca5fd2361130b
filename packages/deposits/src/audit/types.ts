/**
 * The deposit audit's bounds, options, dependencies and result (docs/chains.md "Every deposit is
 * accounted for"): shared by run.ts (the run) and targets.ts (which addresses it reads), so neither
 * imports the other's types.
 */
import type { Sql } from '@wh/db'
import type { Alerter, ChainClients, ChainGuard, ChainInfo, ChainName } from '@wh/wallet'
import type { Redis } from 'ioredis'

export const DEPOSIT_AUDIT_EVERY_MS = 30_000
/** Addresses the rotation reads per tick: 100,000 users are a full rotation in 100 ticks. */
export const AUDIT_ROTATION_BATCH = 1_000
/** Addresses read per tick ahead of the rotation: open surplus episodes, then recent activity. */
export const AUDIT_PRIORITY_BATCH = 1_000
/**
 * How far back the traces of an address without a clean reading go (its first reading saw a
 * surplus). An address is read at least once per rotation, so a later episode starts at its last
 * clean reading, a rotation back at most.
 */
export const AUDIT_TRACE_LOOKBACK_BLOCKS = 50_000n

/** Readings after which a surplus whose traces keep failing is alerted (a failure may be transient). */
export const AUDIT_TRACE_FAILURE_READINGS = 5

export const depositAuditTickName = (chain: ChainName) => `deposits-audit-${chain}`

/** What the audit reads (the worker's deps satisfy it). */
export interface DepositAuditDeps {
  readonly sql: Sql
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly alerter: Pick<Alerter, 'alert'>
}

/** What the audit tick reads besides: its lock, and whether the chain's RPC is the chain. */
export interface DepositAuditTickDeps extends DepositAuditDeps {
  readonly redis: Redis
  readonly chainGuard: Pick<ChainGuard, 'ready'>
}

export interface DepositAuditOptions {
  rotationBatch?: number
  priorityBatch?: number
  /** addresses per eth_call */
  balanceBatch?: number
  traceLookbackBlocks?: bigint
  maxBlocksPerTraceCall?: number
}

export interface DepositAuditResult {
  chain: ChainName
  /** 'no-cursor': the scan has recorded no block yet; 'halted': the scan is halted (a reorg) */
  status: 'audited' | 'no-cursor' | 'halted'
  /** the block the balances were read at */
  block?: bigint
  /** addresses read, of which from the priority set and from the rotation */
  read: number
  priority: number
  rotation: number
  /** the rotation came back to the lowest hd_index */
  rotationWrapped: boolean
  /** readings with a surplus */
  surpluses: number
  /** internal transfers credited as deposits by this tick */
  credited: number
  alerted: number
  resolved: number
  /** eth_call, trace_filter and trace_transaction requests */
  rpcCalls: number
  /** the trace API failed (not "method not found"): the surpluses wait for the next tick */
  traceFailed: boolean
}
