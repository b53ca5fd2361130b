/**
 * Circle's CCTP V2 (Cross-Chain Transfer Protocol) on the four deposit chains, as Circle publishes it (read on
 * 2026-11-28; each fact with its source in docs/chains.md "The L2 route"): USDC burned on one chain's
 * TokenMessengerV2 is minted on another's through its MessageTransmitterV2 once Circle's attestation service has
 * signed the message. The local run and tests deploy stand-ins of both contracts at addresses of their own
 * (CCTP_TOKEN_MESSENGER_LOCAL, CCTP_MESSAGE_TRANSMITTER_LOCAL) and run a local attester.
 */
import type { Address } from 'viem'
import type { ChainName } from '../chains'

/** Circle's domain of each chain (its id in messages; not the chain id). */
export const CCTP_DOMAINS: Readonly<Record<ChainName, number>> = Object.freeze({
  ethereum: 0,
  optimism: 2,
  arbitrum: 3,
  base: 6,
})

/** TokenMessengerV2 and MessageTransmitterV2 on mainnet: one address on every chain (CREATE2 deployments). */
export const MAINNET_CCTP: Readonly<{ tokenMessenger: Address; messageTransmitter: Address }> = Object.freeze({
  tokenMessenger: '0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d',
  messageTransmitter: '0x81D40F21F12A8F0E3252Bccb954D722d4c464B64',
})

/** Circle's attestation service (Iris) on mainnet; `iris-api-sandbox.circle.com` for the testnets. */
export const MAINNET_ATTESTATION_URL = 'https://iris-api.circle.com'

/** A fast transfer asks for attestation at the confirmed level (1000); a standard one at finalized (2000). */
export const FINALITY_FAST = 1000
export const FINALITY_STANDARD = 2000

/** What one burn may move: Circle's limit per CCTP transaction ($10 million); a larger one reverts. */
export const CCTP_MAX_BURN_BASE_UNITS = 10_000_000n * 1_000_000n

/**
 * How long Circle documents an attestation to take, from the burn: a standard transfer from Ethereum, OP Mainnet,
 * Base or Arbitrum waits for the L1 block holding it to finalise, "~13 to 19 minutes"; a fast one "seconds to a
 * few minutes" (~8-20 s typically). A transfer not minted past this is late: ops are told (once).
 */
export const CCTP_DOCUMENTED_MS: Readonly<Record<'fast' | 'standard', number>> = Object.freeze({
  fast: 5 * 60_000,
  standard: 19 * 60_000,
})

/** Circle asks for at most 35 requests a second and blocks a client for 5 minutes past it (HTTP 429). */
export const ATTESTATION_RATE_LIMIT_BLOCK_MS = 5 * 60_000
/** Circle's advice: poll no more often than every 5 s. */
export const ATTESTATION_POLL_MIN_MS = 5_000
