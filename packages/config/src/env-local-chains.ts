/**
 * The local run's four nodes in the environment (docs/chains.md "Local run: four chains"): their checks across
 * variables and the configuration they build, apart from env.ts (its size).
 */
import { getAddress } from 'viem'
import type { ApiConfig } from './env-config'
import { CHAIN_NAMES, type ChainName, type EnvName, L2_CHAIN_NAMES } from './env-spec'

type Problem = { name: string; reason: string }

/** The variables of the local run's four nodes (USDC_ADDRESS_LOCAL_*, CHAIN_ID_LOCAL_*): all or none. */
const LOCAL_CHAIN_VARS = [
  ...CHAIN_NAMES.map((c) => `USDC_ADDRESS_LOCAL_${c.toUpperCase()}` as EnvName),
  ...L2_CHAIN_NAMES.map((c) => `CHAIN_ID_LOCAL_${c.toUpperCase()}` as EnvName),
]

/**
 * The local nodes: never in production (they point every chain at test contracts), all together (a chain left
 * out would fall back to its public deployment's addresses on a local node), and four distinct chain ids (two
 * names of one network would credit every deposit twice and share one hot wallet's nonces).
 */
export function localChainProblems(
  v: Partial<Record<EnvName, string>>,
  problems: Problem[],
  read: ReadonlySet<EnvName>,
): void {
  const set = LOCAL_CHAIN_VARS.filter((n) => v[n] !== undefined)
  if (set.length === 0) return
  if (v.NODE_ENV === 'production') {
    for (const name of set) problems.push({ name, reason: 'must not be set when NODE_ENV=production' })
    return
  }
  // the local run's setup deploys the TestUSDCs: it reads the chain ids without them
  const missing = LOCAL_CHAIN_VARS.filter((n) => v[n] === undefined && read.has(n))
  if (missing.length > 0) {
    problems.push({ name: missing.join(', '), reason: `must be set together with ${set.join(', ')}` })
    return
  }
  const ids = [v.EXCHANGE_CHAIN_ID, ...L2_CHAIN_NAMES.map((c) => v[`CHAIN_ID_LOCAL_${c.toUpperCase()}` as EnvName])]
  if (v.EXCHANGE_CHAIN_ID !== undefined && new Set(ids.map(Number)).size !== ids.length)
    problems.push({
      name: 'CHAIN_ID_LOCAL_OPTIMISM, CHAIN_ID_LOCAL_BASE, CHAIN_ID_LOCAL_ARBITRUM',
      reason: 'must differ from each other and from EXCHANGE_CHAIN_ID (the local Ethereum): one node per chain',
    })
}

/** The local nodes (undefined without them): Ethereum's chain id is the exchange's L1, EXCHANGE_CHAIN_ID. */
export function localChainsPart(v: Partial<Record<EnvName, string>>): ApiConfig['localChains'] {
  if (LOCAL_CHAIN_VARS.some((n) => v[n] === undefined)) return undefined
  const of = (c: ChainName) => ({
    chainId: Number(c === 'ethereum' ? v.EXCHANGE_CHAIN_ID : v[`CHAIN_ID_LOCAL_${c.toUpperCase()}` as EnvName]),
    usdc: getAddress(v[`USDC_ADDRESS_LOCAL_${c.toUpperCase()}` as EnvName] as string),
  })
  return { ethereum: of('ethereum'), optimism: of('optimism'), base: of('base'), arbitrum: of('arbitrum') }
}
