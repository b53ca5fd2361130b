/**
 * Collateral and instrument assets of the simulated deployment. USDC and the option/perp asset
 * addresses are Derive mainnet's; the ETH and BTC spot asset addresses are simulator-only
 * (derived from a label), which is harmless because clients read them from `public/get_currency`.
 */
import { type Address, getAddress, keccak256, toHex } from 'viem'

export type CollateralName = 'USDC' | 'ETH' | 'BTC'
export const UNDERLYINGS = ['ETH', 'BTC'] as const
export type Underlying = (typeof UNDERLYINGS)[number]

export interface CollateralAsset {
  name: CollateralName
  decimals: number
  /** The protocol (wrapped) asset address signed in deposit/withdraw/transfer data. */
  address: Address
  underlyingErc20: Address
}

const simAddress = (label: string): Address => getAddress(`0x${keccak256(toHex(`derive-sim:${label}`)).slice(26)}`)

export const COLLATERALS: Record<CollateralName, CollateralAsset> = {
  USDC: {
    name: 'USDC',
    decimals: 6,
    address: '0x57B03E14d409ADC7fAb6CFc44b5886CAD2D5f02b',
    underlyingErc20: '0x6879287835A86F50f784313dBEd5E5cCC5bb8481',
  },
  ETH: { name: 'ETH', decimals: 18, address: simAddress('ETH'), underlyingErc20: simAddress('WETH') },
  BTC: { name: 'BTC', decimals: 8, address: simAddress('BTC'), underlyingErc20: simAddress('WBTC') },
}

export const OPTION_ASSETS: Record<Underlying, Address> = {
  ETH: '0x4BB4C3CDc7562f08e9910A0C7D8bB7e108861eB4',
  BTC: '0xd0711b9eBE84b778483709CDe62BacFDBAE13623',
}

export const PERP_ASSETS: Record<Underlying, Address> = {
  ETH: '0xAf65752C4643E25C02F693f9D4FE19cF23a095E3',
  BTC: '0xDBa83C0C654DB1cd914FA2710bA743e925B53086',
}

export function collateralByAddress(address: string): CollateralAsset | undefined {
  return Object.values(COLLATERALS).find((c) => c.address.toLowerCase() === address.toLowerCase())
}

export function isCollateralName(s: string): s is CollateralName {
  return s === 'USDC' || s === 'ETH' || s === 'BTC'
}
