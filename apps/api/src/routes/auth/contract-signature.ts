/**
 * Sign-in by a contract account (docs/architecture.md "Sign-in"): a Safe, a Coinbase Smart Wallet,
 * an ERC-4337 account has no key, so its "signature" is whatever its own `isValidSignature` accepts
 * (ERC-1271), and one not deployed yet sends it wrapped with its factory call (ERC-6492).
 *
 * Asked only when local recovery did not give the message's address: an EOA never reaches here,
 * and only after the route read that the nonce is usable and that the address is not bound to
 * another chain (docs/architecture.md "Sign-in"): a caller cannot make us run code for a message
 * that could never sign in. The chain asked is the one the message names (its Chain ID), if it is
 * one of ours; any other is a rejection without a call. One `eth_call` runs the ERC-6492 universal
 * validator (viem's bytecode) as deployless code, with no verifier trusted at an address: for a
 * deployed account it calls `isValidSignature`; for a wrapped signature it first runs the factory
 * call inside that same simulation, so nothing is ever deployed. The call is bounded in time
 * (CONTRACT_SIGNATURE_TIMEOUT_MS, no retry) and in gas (CONTRACT_SIGNATURE_GAS: the caller chooses
 * the factory's code, and a node's own cap is tens of millions), and every failure, a timeout, an
 * RPC error, a revert, out of gas or another value than the magic one, is `false`: the route
 * answers the one opaque rejection.
 */
import type { ChainInfo, ChainName } from '@wh/wallet'
import { viemChain } from '@wh/wallet'
import {
  bytesToHex,
  createPublicClient,
  encodeDeployData,
  erc6492SignatureValidatorAbi,
  erc6492SignatureValidatorByteCode,
  type Hex,
  hexToBool,
  http,
  isErc8010Signature,
  type PublicClient,
} from 'viem'
import { call } from 'viem/actions'
import { hashPersonalMessage } from '../../lib/recover'
import type { SiweFields } from './siwe-message'

/** The whole contract check gives up after this long (the RPC's HTTP deadline, and a timer above it). */
export const CONTRACT_SIGNATURE_TIMEOUT_MS = 3_000
/**
 * The gas the validator's call may burn: a factory deployment (a Safe, a Coinbase Smart Wallet: a few
 * hundred thousand) and `isValidSignature` fit well within it; code that loops stops here.
 */
export const CONTRACT_SIGNATURE_GAS = 3_000_000n

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
    return withinDeadline(validate(client, fields.address as Hex, hash, sig), timeoutMs)
  }
}

/** ERC-6492's universal validator, deployless, gas-capped: whether it answers true. */
async function validate(client: PublicClient, address: Hex, hash: Hex, signature: Hex): Promise<boolean> {
  const { data } = await call(client, {
    data: encodeDeployData({
      abi: erc6492SignatureValidatorAbi,
      args: [address, hash, signature],
      bytecode: erc6492SignatureValidatorByteCode,
    }),
    gas: CONTRACT_SIGNATURE_GAS,
  })
  return hexToBool(data ?? '0x0')
}
