/**
 * Derive's L1 contracts come only from configuration (EXCHANGE_DEPOSIT_MANAGER_ADDRESS,
 * EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS): no official source publishes the mainnet ones, and the testnet
 * ones rotate (docs/exchange-v3.md "Contracts"). At start the worker checks that each is what it
 * claims to be on the exchange chain: the RPC's chain id is EXCHANGE_CHAIN_ID, code is present at the
 * address, and a call of the published ABI answers (the manager's `publicHeadIndex()`, the outbox's
 * `VERIFIABLE_APP()`, a non-zero address). A failed check stops the worker before money moves; an
 * RPC that does not answer yet only waits (as the chains' own check at start). On Sepolia an address
 * other than Derive's published one is a warning: the docs may lag a redeploy, or lead it. On a chain
 * that is not one of Derive's (the local run's, the tests': the stand-ins may not be deployed yet when
 * a worker starts) the problems are warnings.
 */
import type { Config } from '@wh/config'
import { errorMessage } from '@wh/core'
import { V3_MAINNET_CHAIN_ID, V3_TESTNET_CHAIN_ID, V3_TESTNET_CONTRACTS } from '@wh/exchange'
import { type Address, createPublicClient, getAddress, http, type PublicClient, parseAbi, zeroAddress } from 'viem'

const MANAGER_ABI = parseAbi(['function publicHeadIndex() view returns (uint256)'])
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
  const checks: Array<[string, Address | undefined, () => Promise<unknown>, string, Address]> = [
    [
      'EXCHANGE_DEPOSIT_MANAGER_ADDRESS',
      x.depositManager,
      () =>
        client.readContract({
          address: x.depositManager as Address,
          abi: MANAGER_ABI,
          functionName: 'publicHeadIndex',
        }),
      'publicHeadIndex()',
      V3_TESTNET_CONTRACTS.actionManager,
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
      V3_TESTNET_CONTRACTS.withdrawalOutbox,
    ],
  ]
  for (const [setting, address, call, what, published] of checks) {
    if (!address) continue
    const problem = await checkOne(client, setting, address, call, what)
    if (problem) problems.push(problem)
    if (chainId === V3_TESTNET_CHAIN_ID && getAddress(address) !== published)
      warnings.push(`${setting} (${address}) is not Derive's published testnet contract (${published})`)
  }
  const derives = chainId === V3_MAINNET_CHAIN_ID || chainId === V3_TESTNET_CHAIN_ID
  return derives ? { problems, warnings } : { problems: [], warnings: [...warnings, ...problems] }
}
