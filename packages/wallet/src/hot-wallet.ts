/**
 * What a chain's hot wallet holds and owes (docs/chains.md "Hot wallet"): its USDC and ETH on chain, and the USDC
 * of its chain's `requested` withdrawals, which leave from it. Read by the bridge, the CCTP route and the treasury.
 */
import type { Sql } from '@wh/db'
import { type Address, erc20Abi, type LocalAccount } from 'viem'
import type { ChainName } from './chains'
import type { ChainClients } from './clients'

/** The chain clients and the hot wallet's account per chain (the worker's deps satisfy it). */
export interface HotWalletReader {
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly hotWallet: (chain: ChainName) => LocalAccount
}

/** The chain's hot wallet's USDC on chain, in base units. */
export async function hotWalletUsdc(deps: HotWalletReader, chain: ChainName): Promise<bigint> {
  const c = deps.clients.get(chain)
  const usdc = c?.info.tokens.find((t) => t.symbol === 'USDC')?.contract
  if (!c || !usdc) throw new Error(`no USDC on ${chain} in the registry`)
  return c.publicClient.readContract({
    address: usdc,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [deps.hotWallet(chain).address as Address],
  })
}

/** The chain's hot wallet's ETH on chain, in wei. */
export async function hotWalletEth(deps: HotWalletReader, chain: ChainName): Promise<bigint> {
  const c = deps.clients.get(chain)
  if (!c) throw new Error(`no clients for ${chain}`)
  return c.publicClient.getBalance({ address: deps.hotWallet(chain).address as Address })
}

/** The chain's `requested` USDC withdrawals (they leave from its hot wallet), in base units. */
export async function requestedUsdc(deps: { readonly sql: Sql }, chain: ChainName): Promise<bigint> {
  const [reserved] = await deps.sql<{ v: string }[]>`
    select coalesce(sum(amount), 0)::text as v from withdrawals
    where state = 'requested' and chain = ${chain} and currency = 'USDC'`
  return BigInt(reserved?.v ?? '0')
}
