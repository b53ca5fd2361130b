/**
 * The chains' names, a leaf: the variables' spec (env-spec.ts) and the checks of variables that
 * name chains (l2-targets.ts) both read them, and the spec runs those checks.
 */

/** The four deposit chains (each has its RPC_URL_*; docs/chains.md). */
export const CHAIN_NAMES = ['ethereum', 'optimism', 'base', 'arbitrum'] as const
export type ChainName = (typeof CHAIN_NAMES)[number]
/** The chains other than Ethereum: their local stand-in's chain id has a variable of its own (Ethereum's is EXCHANGE_CHAIN_ID). */
export const L2_CHAIN_NAMES = ['optimism', 'base', 'arbitrum'] as const satisfies readonly ChainName[]
