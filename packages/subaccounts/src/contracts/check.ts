/**
 * Derive's L1 contracts come only from configuration (EXCHANGE_DEPOSIT_MANAGER_ADDRESS,
 * EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS): no official source publishes the mainnet ones, and the testnet
 * ones rotate (docs/exchange-v3.md "Contracts"). At start the worker checks that each is what it
 * claims to be on the exchange chain: the RPC's chain id is EXCHANGE_CHAIN_ID, code is present at the
 * address, and a call of the published ABI answers (the manager's `publicHeadIndex()`, the outbox's
 * `VERIFIABLE_APP()`, a non-zero address). A failed check stops the worker before money moves; an
 * RPC that does not answer yet only waits (as the chains' own check at start). On Sepolia an address
 * other than Derive's published one is a warning: the sources may lag a redeploy, or lead it, and have
 * disagreed before; one of the sets Derive published earlier is named as such. On a chain
 * that is not one of Derive's (the local run's, the tests': the stand-ins may not be deployed yet when
 * a worker starts) the problems are warnings.
 */
import type { Config } from '@wh/config'
import { errorMessage } from '@wh/core'
import {
  ONCHAIN_ACTION_MANAGER_ABI,
  V3_MAINNET_CHAIN_ID,
  V3_TESTNET_CHAIN_ID,
  V3_TESTNET_CONTRACTS,
  V3_TESTNET_EARLIER_CONTRACTS,
} from '@wh/exchange'
import { type Address, createPublicClient, getAddress, http, type PublicClient, parseAbi, zeroAddress } from 'viem'

const OUTBOX_ABI = parseAbi(['function VERIFIABLE_APP() view returns (address)'])

export interface ContractsCheck {
  /** each a reason the worker must not start, naming the setting and the address */
  readonly problems: string[]
  /** worth saying, not stopping for */
  readonly warnings: string[]
  /** the RPC did not answer: nothing could be checked */
  readonly unreachable?: string
}

async function checkOne(
  client: PublicClient,
  setting: string,
  address: Address,
  call: () => Promise<unknown>,
  what: string,
): Promise<string | undefined> {
  const code = await client.getCode({ address })
  if (!code || code === '0x') return `${setting} (${address}) holds no code on the exchange chain`
  try {
    const answer = await call()
    if (answer === zeroAddress) return `${setting} (${address}) answers ${what} with the zero address`
  } catch {
    return `${setting} (${address}) does not answer ${what}: not the contract Derive publishes`
  }
  return undefined
}

/** On Sepolia: undefined for the published address, else what the configured one is. */
function testnetAddressWarning(
  setting: string,
  address: Address,
  contract: 'actionManager' | 'withdrawalOutbox',
): string | undefined {
  const published = V3_TESTNET_CONTRACTS[contract]
  if (address === published) return undefined
  const earlier = (V3_TESTNET_EARLIER_CONTRACTS[contract] as readonly Address[]).includes(address)
  return earlier
    ? `${setting} (${address}) is a testnet contract Derive published before ${published}, the one it publishes now`
    : `${setting} (${address}) is not Derive's published testnet contract (${published})`
}

export async function checkExchangeContracts(
  config: Config,
  client: PublicClient = createPublicClient({ transport: http(config.exchange.chainRpcUrl) }),
): Promise<ContractsCheck> {
  const x = config.exchange
  const problems: string[] = []
  const warnings: string[] = []
  let chainId: number
  try {
    chainId = await client.getChainId()
  } catch (e) {
    return { problems, warnings, unreachable: errorMessage(e) }
  }
  if (chainId !== x.chainId)
    return {
      problems: [`EXCHANGE_CHAIN_RPC_URL serves chain ${chainId}, not EXCHANGE_CHAIN_ID ${x.chainId}`],
      warnings,
    }
  const checks: Array<
    [string, Address | undefined, () => Promise<unknown>, string, 'actionManager' | 'withdrawalOutbox']
  > = [
    [
      'EXCHANGE_DEPOSIT_MANAGER_ADDRESS',
      x.depositManager,
      () =>
        client.readContract({
          address: x.depositManager as Address,
          abi: ONCHAIN_ACTION_MANAGER_ABI,
          functionName: 'publicHeadIndex',
        }),
      'publicHeadIndex()',
      'actionManager',
    ],
    [
      'EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS',
      x.withdrawalOutbox,
      () =>
        client.readContract({
          address: x.withdrawalOutbox as Address,
          abi: OUTBOX_ABI,
          functionName: 'VERIFIABLE_APP',
        }),
      'VERIFIABLE_APP()',
      'withdrawalOutbox',
    ],
  ]
  for (const [setting, address, call, what, contract] of checks) {
    if (!address) continue
    const problem = await checkOne(client, setting, address, call, what)
    if (problem) problems.push(problem)
    if (chainId === V3_TESTNET_CHAIN_ID) {
      const warning = testnetAddressWarning(setting, getAddress(address), contract)
      if (warning) warnings.push(warning)
    }
  }
  const derives = chainId === V3_MAINNET_CHAIN_ID || chainId === V3_TESTNET_CHAIN_ID
  return derives ? { problems, warnings } : { problems: [], warnings: [...warnings, ...problems] }
}
