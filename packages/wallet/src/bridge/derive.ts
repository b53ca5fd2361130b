/**
 * The live bridge: Derive's documented deposit route. What could be verified, and what could not
 * (docs/chains.md "Bridge" has the sources):
 *
 * Verified (derivexyz/v2-aa `src/interfaces/ISocketVault.sol`, `src/gelato/LyraForwarderBase.sol`;
 * docs.derive.xyz "What bridge does Derive use?"): deposits to Derive Chain go through Socket
 * "SuperBridge" vaults on each source chain (ethereum, arbitrum, optimism, base). The depositor
 * approves the vault for the token and calls
 * `depositToAppChain(receiver, amount, msgGasLimit, connector)` with `msg.value` =
 * `getMinFees(connector, msgGasLimit)`, the message fee in the source chain's native token; the
 * relay credits the receiver on Derive Chain after 2–10 minutes.
 *
 * Not verified here, so this adapter refuses to run rather than guess:
 * - the USDC vault and connector addresses per source chain: Socket's published deployment file
 *   (derivexyz/socket-plugs `deployments/superbridge/prod_lyra_addresses.json`) lists the newer
 *   assets but not USDC, which uses older vaults; a wrong address would send the platform's funds
 *   to a contract that never credits them;
 * - who receives old-style USDC deposits (derive-client notes they cannot name a custom receiver),
 *   i.e. whether EXCHANGE_WALLET_ADDRESS would be credited at all;
 * - Derive's current documentation describes an exchange settling on Ethereum L1 (v3, deposit
 *   addresses from `public/register_deposit_address`), while this service speaks the v2 protocol;
 * - the outbox sends transfers only: an approve plus a payable contract call would need it to
 *   record arbitrary calls (and the message fee, paid in ETH, is neither gas nor a token fee of
 *   `bridged`: the journal would need a rule for it).
 */
import type { ChainName } from '../chains'
import type { OutboundRecord } from '../outbox'
import {
  type BridgeAdapter,
  type BridgeStatus,
  type BridgeTransfer,
  BridgeUnavailableError,
  EXCHANGE_CHAIN_NAME,
} from './types'

/** The Socket vault's deposit interface (derivexyz/v2-aa ISocketVault.sol), for the implementation to come. */
export const socketVaultAbi = [
  {
    type: 'function',
    name: 'depositToAppChain',
    stateMutability: 'payable',
    inputs: [
      { name: 'receiver_', type: 'address' },
      { name: 'amount_', type: 'uint256' },
      { name: 'msgGasLimit_', type: 'uint256' },
      { name: 'connector_', type: 'address' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'getMinFees',
    stateMutability: 'view',
    inputs: [
      { name: 'connector', type: 'address' },
      { name: 'minGasLimit', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }],
  },
  { type: 'function', name: '__token', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
] as const

export const DERIVE_BRIDGE_UNVERIFIED =
  "Derive's USDC deposit bridge is not verified for this service (vault and connector addresses, receiver, v2/v3 route); " +
  'refusing to send platform funds to an unverified contract. See docs/chains.md "Bridge".'

export class DeriveBridgeAdapter implements BridgeAdapter {
  readonly name = 'derive-socket'
  readonly toChain = EXCHANGE_CHAIN_NAME

  assertReady(fromChain: ChainName): void {
    throw new BridgeUnavailableError(DERIVE_BRIDGE_UNVERIFIED, { adapter: this.name, fromChain })
  }

  async send(t: BridgeTransfer): Promise<OutboundRecord> {
    this.assertReady(t.fromChain)
    throw new BridgeUnavailableError(DERIVE_BRIDGE_UNVERIFIED)
  }

  async status(t: BridgeTransfer, _record: OutboundRecord): Promise<BridgeStatus> {
    this.assertReady(t.fromChain)
    throw new BridgeUnavailableError(DERIVE_BRIDGE_UNVERIFIED)
  }
}
