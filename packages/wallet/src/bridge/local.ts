/**
 * The local bridge (tests and the local run), where one local node stands in for the deposit
 * chains and the exchange chain, and the Derive simulator for the exchange:
 *
 * 1. the source leg is a real ERC-20 transfer on the local node, from the chain's hot wallet to
 *    EXCHANGE_WALLET_ADDRESS, through the crash-safe outbox (purpose 'bridge', step 0);
 * 2. once that transfer is final, the "relay": the simulator does not watch any chain, so the
 *    adapter credits the exchange wallet's on-chain balance there through its control API
 *    (POST /_sim/fund_wallet). That is the one stand-in part: on Derive the bridge's relayers do
 *    it, and nothing here pretends otherwise.
 *
 * The credit is a call to an external, non-idempotent API, so it cannot be exactly-once by
 * construction. It is made at most once: `claimCredit(key)` (Redis SET NX in the worker) is taken
 * before the call, so a crash or retry never credits twice; a crash between the claim and the call
 * leaves the simulator short by that amount (logged by the caller as 'credit claimed earlier'). The
 * journal is unaffected either way: it follows the chain. The local bridge keeps no fee.
 */
import { type Address, formatUnits, getAddress } from 'viem'
import type { ChainName } from '../chains'
import { confirmOutbound, type OutboundRecord, type OutboxDeps, sendOnce } from '../outbox'
import {
  type BridgeAdapter,
  type BridgeStatus,
  type BridgeTransfer,
  BridgeUnavailableError,
  EXCHANGE_CHAIN_NAME,
} from './types'

/** The simulator's name for USDC collateral (docs/exchange.md). */
const SIM_ASSET: Record<BridgeTransfer['token'], string> = { USDC: 'USDC' }
const DECIMALS: Record<BridgeTransfer['token'], number> = { USDC: 6 }
/** The control call's deadline. */
export const SIM_CONTROL_TIMEOUT_MS = 5_000

export interface LocalBridgeOptions {
  readonly outbox: OutboxDeps
  /** EXCHANGE_WALLET_ADDRESS: receives the transfer on the local node and the simulator's credit */
  readonly exchangeWallet: Address
  /** the simulator's base URL (EXCHANGE_HTTP_URL); its control API is under /_sim/ */
  readonly simulatorUrl: string
  /** true the first time for a key, false after (Redis SET NX in the worker) */
  readonly claimCredit: (key: string) => Promise<boolean>
  readonly fetch?: typeof fetch
}

export class LocalBridgeAdapter implements BridgeAdapter {
  readonly name = 'local'
  readonly toChain = EXCHANGE_CHAIN_NAME
  readonly #o: LocalBridgeOptions

  constructor(o: LocalBridgeOptions) {
    this.#o = { ...o, exchangeWallet: getAddress(o.exchangeWallet) }
  }

  assertReady(fromChain: ChainName): void {
    const usdc = this.#o.outbox.registry.get(fromChain)?.tokens.find((t) => t.symbol === 'USDC')?.contract
    if (!usdc) throw new BridgeUnavailableError('no USDC contract for the source chain', { fromChain })
  }

  send(t: BridgeTransfer): Promise<OutboundRecord> {
    return sendOnce(this.#o.outbox, {
      chain: t.fromChain,
      purpose: 'bridge',
      refId: t.transferId,
      step: 0,
      signer: t.signer,
      to: this.#o.exchangeWallet,
      token: t.token,
      amountBaseUnits: t.amountBaseUnits,
    })
  }

  async status(t: BridgeTransfer, record: OutboundRecord): Promise<BridgeStatus> {
    const r = await confirmOutbound(this.#o.outbox, record.id)
    if (r.state === 'failed') return { state: 'failed', record: r, reason: 'source transaction failed on chain' }
    if (r.state !== 'confirmed') return { state: 'pending', record: r }
    // the relay: credit the simulator once the source transfer is final
    if (await this.#o.claimCredit(`bridge-credit:${r.txHash.toLowerCase()}`)) {
      const res = await (this.#o.fetch ?? fetch)(new URL('/_sim/fund_wallet', this.#o.simulatorUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          wallet: this.#o.exchangeWallet,
          asset_name: SIM_ASSET[t.token],
          amount: formatUnits(t.amountBaseUnits, DECIMALS[t.token]),
        }),
        signal: AbortSignal.timeout(SIM_CONTROL_TIMEOUT_MS),
      })
      if (!res.ok) {
        throw new BridgeUnavailableError('the simulator refused the bridge credit', { status: res.status })
      }
    }
    return { state: 'delivered', record: r, feeBaseUnits: 0n }
  }
}
