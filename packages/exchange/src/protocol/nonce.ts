/**
 * Action nonces as Derive documents them: the UTC time in milliseconds followed by a few
 * random digits (e.g. 1695836058725001), so two actions in the same millisecond differ.
 * Derive checks uniqueness per (wallet, subaccount); the generator also never repeats itself.
 */
export const NONCE_RANDOM_DIGITS = 3

export class NonceGenerator {
  #last = 0n
  constructor(
    private readonly nowMs: () => number,
    private readonly random: () => number = Math.random,
  ) {}

  /** ms * 1000 + a random three-digit suffix; bumped by one when it would not increase. */
  next(): bigint {
    const suffix = BigInt(Math.floor(this.random() * 10 ** NONCE_RANDOM_DIGITS))
    let candidate = BigInt(Math.floor(this.nowMs())) * 10n ** BigInt(NONCE_RANDOM_DIGITS) + suffix
    if (candidate <= this.#last) candidate = this.#last + 1n
    this.#last = candidate
    return candidate
  }
}

/** The millisecond timestamp a nonce was made at. */
export function nonceTimestampMs(nonce: bigint): number {
  return Number(nonce / 10n ** BigInt(NONCE_RANDOM_DIGITS))
}
