/**
 * Where CCTP lives for this deployment: Circle's contracts (one address on every chain) in production, the local
 * stand-ins (CCTP_TOKEN_MESSENGER_LOCAL, CCTP_MESSAGE_TRANSMITTER_LOCAL, deployed at one address on every local
 * node) in the local run and tests. A deployment of local nodes without the stand-ins has no route: the CCTP ticks
 * refuse, never guessing Circle's addresses on a local node.
 */
import type { Config } from '@wh/config'
import { type Address, getAddress } from 'viem'
import type { ChainInfo, ChainName } from '../chains'
import { CCTP_DOMAINS, MAINNET_CCTP } from './constants'

export interface CctpDeployment {
  readonly chain: ChainName
  readonly domain: number
  readonly tokenMessenger: Address
  readonly messageTransmitter: Address
  /** the chain's USDC (the registry's), which burns and mints */
  readonly usdc: Address
}

export function cctpDeployments(
  config: Pick<Config, 'cctp' | 'localChains'>,
  registry: ReadonlyMap<ChainName, ChainInfo>,
): ReadonlyMap<ChainName, CctpDeployment> {
  const contracts = config.cctp.local ?? (config.localChains === undefined ? MAINNET_CCTP : undefined)
  const out = new Map<ChainName, CctpDeployment>()
  if (!contracts) return out
  for (const info of registry.values()) {
    const usdc = info.tokens.find((t) => t.symbol === 'USDC')?.contract
    if (!usdc) continue
    out.set(info.name, {
      chain: info.name,
      domain: CCTP_DOMAINS[info.name],
      tokenMessenger: getAddress(contracts.tokenMessenger),
      messageTransmitter: getAddress(contracts.messageTransmitter),
      usdc: getAddress(usdc),
    })
  }
  return out
}
