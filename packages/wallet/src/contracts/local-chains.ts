/**
 * The contracts each local chain needs (docs/chains.md "Local run: four chains"): the local run, the Compose
 * setup and the tests of cross-chain behaviour deploy them on every node. Test and local-run only.
 */
import { CHAIN_NAMES, type ChainName } from '@wh/config'
import { type Address, createPublicClient, createWalletClient, getAddress, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { deployTestUsdc } from './deploy'
import { testUsdcAbi } from './test-usdc.gen'

type Nodes = Readonly<Record<ChainName, { readonly rpcUrl: string }>>

/** The clients of one node, signing with `key`. */
export function localClients(rpcUrl: string, key: Hex) {
  const transport = http(rpcUrl)
  return {
    publicClient: createPublicClient({ transport }),
    walletClient: createWalletClient({ account: privateKeyToAccount(key), transport }),
  }
}

/**
 * TestUSDC on each node (or those `only` names), from `deployerKey`'s account (its owner), with `mint` minted to it when given.
 * On a fresh node the k-th chain's deployment comes after k empty transactions, so each chain's TestUSDC
 * has an address of its own: a test that reads one chain's USDC on another fails instead of passing
 * because the addresses happen to be equal.
 */
export async function deployTestUsdcs(
  nodes: Nodes,
  deployerKey: Hex,
  o: { readonly mint?: bigint; readonly only?: readonly ChainName[] } = {},
): Promise<Record<ChainName, Address>> {
  const out = await Promise.all(
    CHAIN_NAMES.filter((name) => o.only === undefined || o.only.includes(name)).map(async (name) => {
      const k = CHAIN_NAMES.indexOf(name)
      const { publicClient, walletClient } = localClients(nodes[name].rpcUrl, deployerKey)
      const account = walletClient.account
      const nonce = await publicClient.getTransactionCount({ address: account.address })
      for (let i = nonce; i < k; i++) {
        const hash = await walletClient.sendTransaction({ to: account.address, value: 0n, chain: null })
        await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      }
      const usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
      if (o.mint !== undefined && o.mint > 0n) {
        const hash = await walletClient.writeContract({
          address: usdc,
          abi: testUsdcAbi,
          functionName: 'mint',
          args: [account.address, o.mint],
          chain: null,
        })
        await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      }
      return [name, usdc] as const
    }),
  )
  return Object.fromEntries(out) as Record<ChainName, Address>
}
