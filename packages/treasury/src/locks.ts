/**
 * The Redis locks the treasury's runs take (@wh/jobs withLock): one run per chain and route at a time, across
 * processes. The keys are those the worker's ticks always took (`lock:` and the tick's name), so a worker of the
 * previous version and this one exclude each other during a rolling deploy.
 */
import type { L2ChainName } from '@wh/config'
import type { ChainName } from '@wh/wallet'

/** A chain's bridge: Ethereum's L1 deposit, or an L2's CCTP sweep to L1 (and that route's open transfer). */
export const bridgeLockKey = (chain: ChainName) => `lock:bridge-${chain}`

/** An L2's refill from L1 over CCTP (and that route's open transfer). */
export const cctpRefillLockKey = (chain: L2ChainName) => `lock:cctp-refill-${chain}`
