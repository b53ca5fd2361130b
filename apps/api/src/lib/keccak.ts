/**
 * keccak-256, native when it loads: the npm `keccak` package's prebuilt binary, called through its
 * sponge state directly. The package's own API wraps each hash in a stream (a `Transform` built per
 * call), which cost 3x the hash itself: a sign-in hashes three times (the address checksum, the
 * message, the recovered key), measured at ~15 µs a hash through the wrapper and ~5 µs direct on the
 * loaded 2-core development machine. The pure-JS @noble/hashes remains the fallback.
 */
import { createRequire } from 'node:module'
import { keccak_256 } from '@noble/hashes/sha3.js'

type Keccak = (data: Uint8Array) => Uint8Array

/** The binding's sponge (keccak/src/addon.cc): initialize(rate, capacity), absorb, squeeze pads and reads. */
interface KeccakState {
  initialize(rate: number, capacity: number): void
  absorb(data: Buffer): void
  squeeze(length: number): Buffer
}

function loadNative(): Keccak | undefined {
  try {
    const require = createRequire(import.meta.url)
    const pkg = require.resolve('keccak/package.json')
    // the addon itself, as keccak/bindings.js loads it (node-gyp-build is keccak's own dependency)
    const State = createRequire(pkg)('node-gyp-build')(pkg.replace(/package\.json$/, '')) as new () => KeccakState
    // one state, reset by initialize before each hash: a hash runs to its end synchronously
    const state = new State()
    const hash: Keccak = (data) => {
      state.initialize(1088, 512) // keccak-256: rate 1088, capacity 512, Keccak's own padding
      state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength))
      return state.squeeze(32)
    }
    // the empty string's known digest: a binding that loads but hashes wrongly is not used
    if (Buffer.from(hash(new Uint8Array(0))).toString('hex') !== EMPTY_DIGEST) return undefined
    return hash
  } catch {
    return undefined
  }
}

const EMPTY_DIGEST = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'

export const keccak256PureJs: Keccak = (data) => keccak_256(data)
const native = loadNative()
export const keccakBackend: 'native' | 'pure-js' = native ? 'native' : 'pure-js'
export const keccak256: Keccak = native ?? keccak256PureJs

/**
 * EIP-55 checksum form of a 0x address given in any case.
 * @example toChecksumAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266') === '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
 */
export function toChecksumAddress(address: string): `0x${string}` {
  const lower = address.slice(2).toLowerCase()
  const hash = keccak256(Buffer.from(lower, 'ascii'))
  let out = '0x'
  for (let i = 0; i < 40; i++) {
    const nibble = ((hash[i >> 1] as number) >> (i % 2 === 0 ? 4 : 0)) & 0x0f
    const c = lower[i] as string
    out += nibble >= 8 ? c.toUpperCase() : c
  }
  return out as `0x${string}`
}
