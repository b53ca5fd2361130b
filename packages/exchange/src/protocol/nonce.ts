/**
 * Action nonces as Derive documents them: the UTC time in milliseconds followed by a few
 * random digits (e.g. 1695836058725001), so two actions in the same millisecond differ.
 * Derive checks uniqueness per (wallet, subaccount); the generator also never repeats itself.
 */
export const NONCE_RANDOM_DIGITS = 3

export class NonceGenerator {
  #last = 0n
  readonly #scale: bigint
  /** `subMsDigits`: the random digits after the milliseconds (3 here; v3's nanoseconds take 6) */
  constructor(
    private readonly nowMs: () => number,
    private readonly random: () => number = Math.random,
    subMsDigits = NONCE_RANDOM_DIGITS,
  ) {
    this.#scale = 10n ** BigInt(subMsDigits)
  }

  /** ms × 10^digits + a random suffix of that many digits; bumped by one when it would not increase. */
  next(): bigint {
    const suffix = BigInt(Math.floor(this.random() * Number(this.#scale)))
    let candidate = BigInt(Math.floor(this.nowMs())) * this.#scale + suffix
    if (candidate <= this.#last) candidate = this.#last + 1n
    this.#last = candidate
    return candidate
  }
}

/** The millisecond timestamp a nonce was made at. */
export function nonceTimestampMs(nonce: bigint): number {
  return Number(nonce / 10n ** BigInt(NONCE_RANDOM_DIGITS))
}
