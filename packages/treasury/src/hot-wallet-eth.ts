/**
 * Each chain's hot wallet ETH against HOT_WALLET_ETH_ALERT (the worker's tick `hot-wallets-eth`, queue `treasury`,
 * every 5 min; docs/chains.md "ETH on the L2s"). ETH is not moved between chains: CCTP carries USDC only, and the
 * canonical bridges take seven days back to L1; each chain keeps the ETH deposited on it (sweeps land there) and an
 * operator tops a chain up when told.
 */
import { CHAIN_NAMES, type ChainGuard, hotWalletEth } from '@wh/wallet'
import type { Redis } from 'ioredis'
import { formatEther } from 'viem'
import type { HotWalletDeps } from './deps'

/** Each chain whose hot wallet holds less ETH than HOT_WALLET_ETH_ALERT: one alert an hour per chain. */
export async function checkHotWalletEth(
  deps: Pick<HotWalletDeps, 'clients' | 'hotWallet' | 'config' | 'alerter'> & {
    readonly redis: Redis
    readonly chainGuard: Pick<ChainGuard, 'ready'>
  },
): Promise<string[]> {
  const low: string[] = []
  for (const chain of CHAIN_NAMES) {
    if (!deps.clients.has(chain) || !(await deps.chainGuard.ready(chain).catch(() => false))) continue
    const eth = await hotWalletEth(deps, chain)
    if (eth >= deps.config.hotWalletEthAlertWei) continue
    low.push(chain)
    const claimed = await deps.redis.set(`alert:hot-eth:${chain}`, '1', 'PX', 3_600_000, 'NX')
    if (claimed === 'OK')
      await deps.alerter.alert('hot wallet ETH low: gas and ETH withdrawals on this chain will stop', {
        chain,
        eth: formatEther(eth),
        alertBelow: formatEther(deps.config.hotWalletEthAlertWei),
      })
  }
  return low
}
