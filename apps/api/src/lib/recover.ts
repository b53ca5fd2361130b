/**
 * Recovers the signer of an EIP-191 personal message, fast.
 * libsecp256k1 (npm `secp256k1`, prebuilt binary) recovers a key in ~80 µs; the pure-JS
 * fallback (@noble/curves) in ~1–2 ms, used only if the native module fails to load.
 */
import { createRequire } from 'node:module'
import { secp256k1 as noble } from '@noble/curves/secp256k1.js'
import { keccak256 } from './keccak'

type Recover = (sig64: Uint8Array, recid: number, hash32: Uint8Array) => Uint8Array | undefined

function loadNative(): Recover | undefined {
  try {
    const require = createRequire(import.meta.url)
    const native = require('secp256k1/bindings') as {
      ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array
    }
    return (sig64, recid, hash32) => {
      try {
        return native.ecdsaRecover(sig64, recid, hash32, false)
      } catch {
        return undefined
      }
    }
  } catch {
    return undefined
  }
}

export const recoverPureJs: Recover = (sig64, recid, hash32) => {
  try {
    const sig = noble.Signature.fromBytes(sig64, 'compact').addRecoveryBit(recid)
    return sig.recoverPublicKey(hash32).toBytes(false)
  } catch {
    return undefined
  }
}

const native = loadNative()
export const recoverBackend: 'native' | 'pure-js' = native ? 'native' : 'pure-js'
const recover: Recover = native ?? recoverPureJs

const encoder = new TextEncoder()

/** EIP-191 version 0x45 hash of a UTF-8 message. */
export function hashPersonalMessage(message: string): Uint8Array {
  const body = encoder.encode(message)
  const prefix = encoder.encode(`\x19Ethereum Signed Message:\n${body.length}`)
  const all = new Uint8Array(prefix.length + body.length)
  all.set(prefix, 0)
  all.set(body, prefix.length)
  return keccak256(all)
}

const SIGNATURE_RE = /^0x[0-9a-fA-F]{130}$/

/** A Buffer is a Uint8Array: no second copy (Uint8Array.from iterates it byte by byte). */
function hexToBytes(hex: string): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex')
}

/**
 * The lowercase 0x address that signed `message`, or undefined for a malformed or
 * unrecoverable signature. `signature` is 65 bytes hex, v in {0, 1, 27, 28}.
 */
export function recoverPersonalSigner(message: string, signature: string, impl: Recover = recover): string | undefined {
  if (!SIGNATURE_RE.test(signature)) return undefined
  const sig = hexToBytes(signature)
  const v = sig[64] as number
  const recid = v >= 27 ? v - 27 : v
  if (recid !== 0 && recid !== 1) return undefined
  const pub = impl(sig.subarray(0, 64), recid, hashPersonalMessage(message))
  if (pub?.length !== 65) return undefined
  const hash = keccak256(pub.subarray(1))
  return `0x${Buffer.from(hash.subarray(12)).toString('hex')}`
}
