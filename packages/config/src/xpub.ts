/**
 * The deposit account's extended public key (DEPOSIT_XPUB): what the API derives deposit addresses
 * from instead of holding the mnemonic (docs/architecture.md "Deposit addresses").
 */
import { createHash } from 'node:crypto'
import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'

/** BIP-44 account 0 of Ethereum; deposit addresses are its external chain, `…/0/{hd_index}`. */
export const DEPOSIT_ACCOUNT_PATH = "m/44'/60'/0'"
const HARDENED = 0x80000000

/** The last derivation, keyed by the mnemonic's hash: loadConfig runs it on every call (tests call it often). */
let memo: { key: string; xpub: string } | undefined

/** The BIP-32 xpub of DEPOSIT_ACCOUNT_PATH for `mnemonic` (one PBKDF2: tens of ms, so the last one is kept). */
export function depositXpubOf(mnemonic: string): string {
  const key = createHash('sha256').update(mnemonic).digest('hex')
  if (memo?.key === key) return memo.xpub
  const seed = mnemonicToSeedSync(mnemonic)
  try {
    const xpub = HDKey.fromMasterSeed(seed).derive(DEPOSIT_ACCOUNT_PATH).publicExtendedKey
    memo = { key, xpub }
    return xpub
  } finally {
    seed.fill(0)
  }
}

/**
 * Why `value` is not the public key of DEPOSIT_ACCOUNT_PATH, or undefined. Never quotes the value:
 * a private extended key given here by mistake must not reach a log.
 */
export function depositXpubProblem(value: string): string | undefined {
  const isPrivate = 'is an extended private key: give the API the public one (xpub), never a private key'
  if (/^[a-z]prv/i.test(value)) return isPrivate
  let key: HDKey
  try {
    key = HDKey.fromExtendedKey(value)
  } catch {
    return 'must be a BIP-32 extended public key (xpub…)'
  }
  if (key.privateKey) return isPrivate
  if (key.depth !== 3 || key.index !== HARDENED)
    return `must be the account key at ${DEPOSIT_ACCOUNT_PATH} (depth 3), not a key of another level`
  return undefined
}
