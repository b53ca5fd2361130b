/**
 * The send's dependencies from a process's own (the worker's deps satisfy `WithdrawalSendSource`):
 * `sendWithdrawal` and the tick's round (send.ts, send-round.ts, which own every write of the row)
 * wired to the real crash-safe outbox of @wh/wallet, the chain's hot wallet, the process's alerter
 * and a Redis claim for the once-per-period alerts.
 */
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  type Alerter,
  type ChainGuard,
  type ChainName,
  confirmOutbound,
  findOutbound,
  type OutboundTransfer,
  type OutboxDeps,
  type OutboxSource,
  outboxOf,
  type PlatformWallet,
  probeChain,
  rpcOf,
  sendOnce,
} from '@wh/wallet'
import type { Redis } from 'ioredis'
import { erc20Abi } from 'viem'
import type { WithdrawalSendDeps } from './send'
import { sendWithdrawals, type WithdrawalSendSummary } from './send-round'

/** Redis key prefix of the stuck-alert claims (one key per withdrawal and period). */
export const WITHDRAWAL_ALERT_KEY_PREFIX = 'alert:'

/** What the send is built from: a process's Postgres, Redis, chains, keys and settings. */
export interface WithdrawalSendSource extends OutboxSource {
  readonly sql: Sql
  /** the once-per-period alert claims */
  readonly redis: Redis
  /** the chain's hot wallet: signs its withdrawals */
  readonly hotWallet: (chain: ChainName) => OutboundTransfer['signer']
  readonly alerter: Alerter
  readonly clock: Clock
  /** WITHDRAWAL_STUCK_MINUTES */
  readonly config: { readonly withdrawal: { readonly stuckMinutes: number } }
  /** the platform's own addresses: a withdrawal there is refused */
  readonly platformWallets: readonly Pick<PlatformWallet, 'address'>[]
  readonly chainGuard: Pick<ChainGuard, 'ready'>
  /**
   * tests only: the outbox's crash points, for a caller that cannot pass `hooks` (the worker's
   * `withdrawal.send` processor, which the fault suite kills there; test/fault/chaos.test.ts)
   */
  readonly outboxHooks?: OutboxDeps['hooks']
}

/**
 * The send's dependencies from a process's: the outbox port on the real outbox (`sendOnce` /
 * `confirmOutbound` over the deps' Postgres, clients and registry).
 *
 * @example
 *   const summary = await sendWithdrawals(withdrawalSendDeps(ctx.deps, ctx.log))
 */
export function withdrawalSendDeps(
  deps: WithdrawalSendSource,
  log: WithdrawalSendDeps['log'],
  hooks?: OutboxDeps['hooks'],
): WithdrawalSendDeps {
  const outbox = outboxOf(deps, hooks ?? deps.outboxHooks)
  return {
    sql: deps.sql,
    outbox: {
      registry: deps.registry,
      sendOnce: (t) => sendOnce(outbox, t),
      confirmOutbound: (id) => confirmOutbound(outbox, id),
      hasTransaction: async (id) => (await findOutbound(outbox, { purpose: 'withdrawal', refId: id })) !== undefined,
      balanceOf: async (chain, token, address) => {
        const c = deps.clients.get(chain)
        const contract = deps.registry.get(chain)?.tokens.find((t) => t.symbol === token)?.contract
        if (!c || contract === undefined) throw new Error(`no ${token} on ${chain}`)
        if (contract === null) return c.publicClient.getBalance({ address })
        return c.publicClient.readContract({
          address: contract,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [address],
        })
      },
      probe: async (chain) => {
        const c = deps.clients.get(chain)
        return c !== undefined && (await probeChain(rpcOf(c.publicClient), c.info.chainId)).ok
      },
      hasCode: async (chain, address) => {
        const c = deps.clients.get(chain)
        if (!c) throw new Error(`no clients for ${chain}`)
        const code = await c.publicClient.getCode({ address })
        return code !== undefined && code !== '0x'
      },
    },
    hotWallet: deps.hotWallet,
    platformAddresses: new Set(deps.platformWallets.map((w) => w.address.toLowerCase())),
    chainReady: (chain) => deps.chainGuard.ready(chain),
    alerter: deps.alerter,
    stuckMinutes: deps.config.withdrawal.stuckMinutes,
    claimAlert: async (key, ttlMs) =>
      (await deps.redis.set(`${WITHDRAWAL_ALERT_KEY_PREFIX}${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
    clock: deps.clock,
    log,
  }
}

/**
 * One withdrawal tick (the worker's `withdrawals-send`): the round over the due rows, on the real
 * outbox, logged when it did anything.
 *
 * @example
 *   const summary = await runWithdrawalSendTick(deps, log) // { sent, failed, pending, … }
 */
export async function runWithdrawalSendTick(
  deps: WithdrawalSendSource,
  log: WithdrawalSendDeps['log'],
): Promise<WithdrawalSendSummary> {
  const summary = await sendWithdrawals(withdrawalSendDeps(deps, log))
  if (summary.sent + summary.failed + summary.errors > 0) log.info({ ...summary }, 'withdrawals tick')
  return summary
}
