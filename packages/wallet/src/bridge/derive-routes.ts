/**
 * Derive's USDC deposit routes, in one place: per source chain, the Socket SuperBridge vault that
 * locks USDC for Derive Chain (chain id 957) and the connector (Socket plug, FAST route) the
 * vault's `depositToAppChain` names. docs/chains.md "Bridge" → "The live adapter" has the reading
 * notes behind each source.
 *
 * USDC is an "old-style" asset in derive_client's terms: its vaults are listed in Socket's
 * `deployments/superbridge/prod_lyra-old_addresses.json`, not in `prod_lyra_addresses.json`
 * (derive_client 0.3.11, `derive_client/utils/prod_addresses.py` merges the two and marks the old
 * file's entries `isNewBridge = False`). Old-style vaults take `depositToAppChain(receiver_,
 * amount_, msgGasLimit_, connector_)` and quote `getMinFees(connector_, msgGasLimit_)`.
 *
 * Every address is also checked on chain before any funds move (derive.ts): the vault's
 * `token__()` must be the registry's USDC and its `getCurrentLockLimit(connector)` must cover the
 * amount (a connector the vault does not know has a limit of 0). A wrong entry therefore makes the
 * adapter refuse; it cannot send the platform's funds to a contract that never credits them.
 */
import type { Address } from 'viem'
import type { ChainName } from '../chains'

/** Derive Chain (formerly Lyra Chain) mainnet: where the vaults below deliver. */
export const DERIVE_CHAIN_ID = 957

export interface DeriveUsdcRoute {
  /** the source chain's id (the registry's entry must match) */
  readonly chainId: number
  /** Circle's native USDC on the source chain (the vault's `token__()`) */
  readonly usdc: Address
  /** the Socket vault: spender of the approve, target of `depositToAppChain` */
  readonly vault: Address
  /** the FAST connector to Derive Chain, passed to `getMinFees` and `depositToAppChain` */
  readonly connector: Address
  /** where each address was read */
  readonly sources: { readonly vault: string; readonly connector: string }
}

export interface DeriveRouteTable {
  /** the exchange chain the vaults deliver to; EXCHANGE_CHAIN_ID must equal it */
  readonly destinationChainId: number
  readonly routes: Readonly<Partial<Record<ChainName, DeriveUsdcRoute>>>
}

const DERIVE_DOCS =
  'Derive docs "Deposit to Derive Chain" (docs.derive.xyz/reference/deposit-to-lyra-chain), bridge table'
const PROD_OLD =
  "Socket prod_lyra-old_addresses.json as tabulated in DefiLlama's Lyra v2 vault list (extracted from prod_lyra_addresses.json and prod_lyra-old_addresses.json)"

/** The live table (mainnet). Tests pass their own table with a stand-in vault. */
export const DERIVE_USDC_ROUTES: DeriveRouteTable = {
  destinationChainId: DERIVE_CHAIN_ID,
  routes: {
    ethereum: {
      chainId: 1,
      usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      vault: '0x6D303CEE7959f814042D31E0624fB88Ec6fbcC1d',
      connector: '0x200AF8FCdD5246D70B369A98143Ac8930A077B7A',
      sources: {
        vault: `${DERIVE_DOCS}; ${PROD_OLD}; l2beat "USDC Vault Derive" escrow`,
        connector:
          'Lyra/Derive example addresses (antoncoding/aa-example examples/addresses.ts, mainnet fastConnector); socket-plugs fork test LyraBurnUSDC (siblingConnector of the Lyra-chain USDC controller)',
      },
    },
    optimism: {
      chainId: 10,
      usdc: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
      vault: '0xDEf0bfBdf7530C75AB3C73f8d2F64d9eaA7aA98e',
      connector: '0xfd76d8b79C2E2c86EA0814e92D5cA0e4E8096c13',
      sources: {
        vault: `${DERIVE_DOCS}; ${PROD_OLD}`,
        connector:
          'a third-party Socket→Derive bridge registry "sourced from socket-plugs" (one source only: enforced on chain by getCurrentLockLimit before every deposit)',
      },
    },
    base: {
      chainId: 8453,
      usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      vault: '0x4e798659b9846F1da7B6D6B5d09d581270aB6FEC',
      connector: '0x57B03E14d409ADC7fAb6CFc44b5886CAD2D5f02b',
      sources: {
        vault: `${PROD_OLD}; l2beat Socket escrow (USDC, base)`,
        connector:
          'a third-party Socket→Derive bridge registry "sourced from socket-plugs" (one source only; the same address is Derive\'s CashAsset on chain 957, plausible for one deployer key but unconfirmed: enforced on chain by getCurrentLockLimit before every deposit)',
      },
    },
    arbitrum: {
      chainId: 42161,
      usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
      vault: '0x5e027ad442e031424b5a2C0ad6f656662Be32882',
      connector: '0x17Fc4c7ea8267044b6D0ACC17a6C049Bed6F8B21',
      sources: {
        vault: `${DERIVE_DOCS}; ${PROD_OLD}; Derive's manual Safe onboarding steps ("Bridge USDC from Arbitrum")`,
        connector:
          'Derive\'s manual Safe onboarding steps ("Bridge USDC from Arbitrum": getMinFees then depositToAppChain with this connector); the third-party registry above',
      },
    },
  },
}
