/**
 * The CCTP V2 message as Circle publishes it (MessageV2 and BurnMessageV2 of circlefin/evm-cctp-contracts,
 * docs/chains.md "The L2 route"): a 148-byte header, then the burn message. Integers are big-endian, addresses
 * are left-padded to 32 bytes. The source chain emits it with an empty nonce, executed finality and fee; the
 * attestation service fills them in, so the message the worker mints with is the attested one.
 *
 * header: version 4 | sourceDomain 4 | destinationDomain 4 | nonce 32 | sender 32 | recipient 32 |
 *         destinationCaller 32 | minFinalityThreshold 4 | finalityThresholdExecuted 4
 * body:   version 4 | burnToken 32 | mintRecipient 32 | amount 32 | messageSender 32 | maxFee 32 |
 *         feeExecuted 32 | expirationBlock 32 | hookData …
 */
import { type Address, getAddress, type Hex, hexToBigInt, hexToNumber, pad, size, slice } from 'viem'

export const MESSAGE_HEADER_BYTES = 148
export const BURN_BODY_BYTES = 228

export interface CctpMessage {
  readonly version: number
  readonly sourceDomain: number
  readonly destinationDomain: number
  readonly nonce: Hex
  readonly sender: Address
  readonly recipient: Address
  readonly destinationCaller: Address
  readonly minFinalityThreshold: number
  readonly finalityThresholdExecuted: number
  readonly burn: {
    readonly version: number
    readonly burnToken: Address
    readonly mintRecipient: Address
    readonly amount: bigint
    readonly messageSender: Address
    readonly maxFee: bigint
    readonly feeExecuted: bigint
    readonly expirationBlock: bigint
  }
}

/** An EVM address as a 32-byte word (what `mintRecipient` and `destinationCaller` take). */
export function addressToBytes32(a: Address): Hex {
  return pad(getAddress(a), { size: 32 })
}

const word = (m: Hex, at: number): Address => getAddress(slice(m, at + 12, at + 32))

/** Decodes a V2 burn message; throws on one too short to be one. */
export function decodeCctpMessage(message: Hex): CctpMessage {
  if (size(message) < MESSAGE_HEADER_BYTES + BURN_BODY_BYTES)
    throw new RangeError(`a CCTP V2 burn message has at least ${MESSAGE_HEADER_BYTES + BURN_BODY_BYTES} bytes`)
  const u32 = (at: number) => hexToNumber(slice(message, at, at + 4))
  const u256 = (at: number) => hexToBigInt(slice(message, at, at + 32))
  const b = MESSAGE_HEADER_BYTES
  return {
    version: u32(0),
    sourceDomain: u32(4),
    destinationDomain: u32(8),
    nonce: slice(message, 12, 44),
    sender: word(message, 44),
    recipient: word(message, 76),
    destinationCaller: word(message, 108),
    minFinalityThreshold: u32(140),
    finalityThresholdExecuted: u32(144),
    burn: {
      version: u32(b),
      burnToken: word(message, b + 4),
      mintRecipient: word(message, b + 36),
      amount: u256(b + 68),
      messageSender: word(message, b + 100),
      maxFee: u256(b + 132),
      feeExecuted: u256(b + 164),
      expirationBlock: u256(b + 196),
    },
  }
}
