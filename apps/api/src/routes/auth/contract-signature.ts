/**
 * Sign-in by a contract account (docs/architecture.md "Sign-in"): a Safe, a Coinbase Smart Wallet,
 * an ERC-4337 account has no key, so its "signature" is whatever its own `isValidSignature` accepts
 * (ERC-1271), and one not deployed yet sends it wrapped with its factory call (ERC-6492).
 *
 * Asked only when local recovery did not give the message's address: an EOA never reaches here.
 * The chain asked is the one the message names (its Chain ID), if it is one of ours; any other is a
 * rejection without a call. viem's `verifyHash` runs the ERC-6492 universal validator as deployless
 * code in one `eth_call` (the chain definition names no deployed verifier): for a deployed account it
 * calls `isValidSignature`; for a wrapped signature it first runs the factory call inside that same
 * simulation, so nothing is ever deployed. The call is bounded (CONTRACT_SIGNATURE_TIMEOUT_MS, no
 * retry), and every failure, a timeout, an RPC error, a revert or another value than the magic one,
 * is `false`: the route answers the one opaque rejection.
 */
import type { ChainInfo, ChainName } from '@wh/wallet'
import { viemChain } from '@wh/wallet'
import { bytesToHex, createPublicClient, http, isErc8010Signature, type PublicClient } from 'viem'
import { verifyHash } from 'viem/actions'
import { hashPersonalMessage } from '../../lib/recover'
import type { SiweFields } from './siwe-message'

/** The whole contract check gives up after this long (the RPC's HTTP deadline, and a timer above it). */
export const CONTRACT_SIGNATURE_TIMEOUT_MS = 3_000

/** Even-length hex; the body schema bounds its length. */
const SIGNATURE_RE = /^0x(?:[0-9a-fA-F]{2})+$/

export interface ContractSignatureOptions {
  readonly timeoutMs?: number
}

/** Whether the contract account the message names accepts `signature` over the message. */
export type ContractSignatureCheck = (fields: SiweFields, message: string, signature: string) => Promise<boolean>

/** One public client per chain id of the registry (the local run's chains share one id and node). */
function clientsByChainId(chains: ReadonlyMap<ChainName, ChainInfo>, timeoutMs: number): Map<number, PublicClient> {
  const clients = new Map<number, PublicClient>()
  for (const info of chains.values()) {
    if (clients.has(info.chainId)) continue
    const transport = http(info.rpcUrl, { timeout: timeoutMs, retryCount: 0 })
    clients.set(info.chainId, createPublicClient({ chain: viemChain(info), transport }) as PublicClient)
  }
  return clients
}

/** `work`'s answer, or `false` once `ms` have passed or when it throws. */
async function withinDeadline(work: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([work.catch(() => false), deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The check for the route, built once from the chain registry.
 *
 * @example
 *   const contractSigned = contractSignatureCheck(chains)
 *   if (!(await contractSigned(fields, message, signature))) throw new SiweRejectedError()
 */
export function contractSignatureCheck(
  chains: ReadonlyMap<ChainName, ChainInfo>,
  opts: ContractSignatureOptions = {},
): ContractSignatureCheck {
  const timeoutMs = opts.timeoutMs ?? CONTRACT_SIGNATURE_TIMEOUT_MS
  const clients = clientsByChainId(chains, timeoutMs)
  return async (fields, message, signature) => {
    const client = clients.get(fields.chainId)
    if (!client || !SIGNATURE_RE.test(signature)) return false
    const sig = signature.toLowerCase() as `0x${string}`
    // ERC-8010 (an EIP-7702 account not delegated yet) is not accepted: its key signs plainly
    if (isErc8010Signature(sig)) return false
    const hash = bytesToHex(hashPersonalMessage(message))
    return withinDeadline(verifyHash(client, { address: fields.address, hash, signature: sig }), timeoutMs)
  }
}
