/**
 * The withdrawal tick (queue `withdrawals`, every WITHDRAWAL_SEND_EVERY_MS): `sendWithdrawals`
 * (@wh/withdrawals, packages/withdrawals/src/send.ts, which owns every write of the row) wired to
 * the real crash-safe outbox of @wh/wallet, the chain's hot wallet, the process's alerter and a
 * Redis claim for the once-per-period stuck alerts.
 *
 * No Redis lock around the run: each withdrawal row is taken FOR UPDATE SKIP LOCKED, so two
 * overlapping runs (a slow one and the next period's, or two replicas) split the rows between
 * them, and the outbox keeps one transaction per withdrawal whoever sends it.
 */
import { confirmOutbound, findOutbound, type OutboxDeps, outboxOf, probeChain, rpcOf, sendOnce } from '@wh/wallet'
import {
  sendWithdrawals,
  WITHDRAWAL_SEND_EVERY_MS,
  WITHDRAWAL_SEND_TICK,
  type WithdrawalSendDeps,
  type WithdrawalSendSummary,
} from '@wh/withdrawals'
import { erc20Abi } from 'viem'
import type { TickContext, TickDefinition, WorkerDeps } from '../../ticks'

/** Redis key prefix of the stuck-alert claims (one key per withdrawal and period). */
export const WITHDRAWAL_ALERT_KEY_PREFIX = 'alert:'

/**
 * The send's dependencies from the worker's: the outbox port on the real outbox (`sendOnce` /
 * `confirmOutbound` over the deps' Postgres, clients and registry).
 *
 * @example
 *   const summary = await sendWithdrawals(withdrawalSendDeps(ctx.deps, ctx.log))
 */
export function withdrawalSendDeps(
  deps: Pick<
    WorkerDeps,
    | 'sql'
    | 'redis'
    | 'clients'
    | 'registry'
    | 'hotWallet'
    | 'alerter'
    | 'clock'
    | 'config'
    | 'signerOf'
    | 'platformWallets'
    | 'outboxTuning'
    | 'chainGuard'
  >,
  log: TickContext['log'],
  hooks?: OutboxDeps['hooks'],
): WithdrawalSendDeps {
  const outbox = outboxOf(deps, hooks)
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

export const withdrawalSendTick: TickDefinition = {
  name: WITHDRAWAL_SEND_TICK,
  queue: 'withdrawals',
  everyMs: WITHDRAWAL_SEND_EVERY_MS,
  process: async (_job, ctx): Promise<WithdrawalSendSummary> => {
    const summary = await sendWithdrawals(withdrawalSendDeps(ctx.deps, ctx.log))
    if (summary.sent + summary.failed + summary.errors > 0) ctx.log.info({ ...summary }, 'withdrawals tick')
    return summary
  },
}
