/**
 * What the platform holds on one chain, read at one block (docs/solvency.md "Continuous
 * solvency"): its own wallets (every role) and the deposit addresses that should hold something
 * (deposits not swept yet, open surplus episodes), ETH in one deployless `eth_call` per 1,000
 * addresses, USDC one `balanceOf` per address (batched by the transport). The places holding more
 * than the records explain are listed as surpluses.
 *
 * The block: the deposit watch's cursor − 1 (every deposit at or below it is recorded, as the
 * deposit audit reads), else the head less the chain's confirmations.
 */
import type { Sql } from '@wh/db'
import {
  type ChainInfo,
  type ChainName,
  depositAddressesToRead,
  expectedEthBalances,
  expectedTokenBalances,
  listCursors,
  type PlatformWallet,
  readBalances,
} from '@wh/wallet'
import { type Address, erc20Abi, type PublicClient } from 'viem'
import type { Leg, PlaceSurplus } from './legs'

export interface ChainReading {
  readonly chain: ChainName
  readonly atBlock: bigint
  readonly legs: Leg[]
  readonly surpluses: PlaceSurplus[]
  /** deposit addresses read */
  readonly depositAddresses: number
}

/**
 * The deposit addresses' holdings as one leg per currency, and each address holding more than its
 * credited deposits explain (above the chain's dust) as a surplus.
 */
async function depositAddressLegs(
  sql: Sql,
  c: { chain: ChainName; info: ChainInfo },
  atBlock: bigint,
  deposits: readonly string[],
  read: { eth: readonly (bigint | undefined)[]; usdc: readonly (bigint | undefined)[]; legs: Leg[] },
): Promise<PlaceSurplus[]> {
  const usdc = c.info.tokens.find((t) => t.symbol === 'USDC')
  const eth = c.info.tokens.find((t) => t.symbol === 'ETH')
  const surpluses: PlaceSurplus[] = []
  const heldEth = deposits.map((_, i) => read.eth[i] ?? 0n)
  const heldUsdc = deposits.map((_, i) => read.usdc[i] ?? 0n)
  const place = `${c.chain}:deposit-addresses`
  const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n)
  read.legs.push({ side: 'asset', currency: 'ETH', kind: 'deposit_addresses', place, amount: sum(heldEth) })
  if (usdc) read.legs.push({ side: 'asset', currency: 'USDC', kind: 'deposit_addresses', place, amount: sum(heldUsdc) })
  const [expEth, expUsdc] = await Promise.all([
    expectedEthBalances(sql, { chain: c.chain, addresses: [...deposits], atBlock }),
    expectedTokenBalances(sql, { chain: c.chain, token: 'USDC', addresses: [...deposits], atBlock }),
  ])
  deposits.forEach((a, i) => {
    const checks = [
      {
        currency: 'ETH',
        held: heldEth[i] ?? 0n,
        expected: expEth.get(a)?.expected ?? 0n,
        dust: eth?.minDepositBaseUnits,
      },
      { currency: 'USDC', held: heldUsdc[i] ?? 0n, expected: expUsdc.get(a) ?? 0n, dust: usdc?.minDepositBaseUnits },
    ]
    for (const k of checks) {
      // below the chain's minimum deposit is dust the scanner ignores too
      if (k.held - k.expected >= (k.dust ?? 1n) && k.held > k.expected)
        surpluses.push({
          currency: k.currency,
          place: `${c.chain}:deposit:${a}`,
          held: k.held,
          expected: k.expected,
          amount: k.held - k.expected,
        })
    }
  })
  return surpluses
}

export async function readChainAssets(
  sql: Sql,
  c: {
    chain: ChainName
    info: ChainInfo
    client: Pick<PublicClient, 'request' | 'readContract'>
    platformWallets: readonly PlatformWallet[]
  },
): Promise<ChainReading> {
  const cursor = (await listCursors(sql)).find((k) => k.chain === c.chain)
  // eth_blockNumber itself: viem's getBlockNumber answers from a cache for a few seconds
  const head = BigInt((await c.client.request({ method: 'eth_blockNumber' })) as string)
  const deep = head > BigInt(c.info.confirmations) ? head - BigInt(c.info.confirmations) : head
  const atBlock = cursor && cursor.nextBlock > 0n && cursor.nextBlock - 1n < deep ? cursor.nextBlock - 1n : deep

  const deposits = await depositAddressesToRead(sql, c.chain)
  const platform = c.platformWallets.map((w) => ({ ...w, address: w.address }))
  const addresses = [...platform.map((w) => w.address), ...deposits]
  const usdc = c.info.tokens.find((t) => t.symbol === 'USDC')
  const [ethBalances, usdcBalances] = await Promise.all([
    readBalances(c.client, addresses, atBlock),
    usdc?.contract
      ? Promise.all(
          addresses.map((a) =>
            c.client.readContract({
              address: usdc.contract as Address,
              abi: erc20Abi,
              functionName: 'balanceOf',
              args: [a as Address],
              blockNumber: atBlock,
            }),
          ),
        )
      : Promise.resolve(addresses.map(() => 0n)),
  ])

  const legs: Leg[] = []
  platform.forEach((w, i) => {
    const place = `${c.chain}:${w.role}:${w.address}`
    const account = w.address
    legs.push({ side: 'asset', currency: 'ETH', kind: 'platform_wallet', place, account, amount: ethBalances[i] ?? 0n })
    if (usdc)
      legs.push({
        side: 'asset',
        currency: 'USDC',
        kind: 'platform_wallet',
        place,
        account,
        amount: usdcBalances[i] ?? 0n,
      })
  })

  const surpluses =
    deposits.length === 0
      ? []
      : await depositAddressLegs(sql, c, atBlock, deposits, {
          eth: ethBalances.slice(platform.length),
          usdc: usdcBalances.slice(platform.length),
          legs,
        })
  return { chain: c.chain, atBlock, legs, surpluses, depositAddresses: deposits.length }
}
