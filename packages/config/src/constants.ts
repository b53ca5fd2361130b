/**
 * Spec 8.1: constants fixed in the product, identical across deployments.
 * Units are in the names. Amounts are bigint in the smallest unit; USD figures decimal strings.
 */

/** Sign-in nonce lifetime. */
export const NONCE_TTL_MS = 5 * 60 * 1000
/** Access JWT lifetime, as @fastify/jwt takes it, and in seconds. */
export const TOKEN_TTL = '7d'
export const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60

/** Swap slippage ladder: minimum-output tolerance steps, in basis points. */
export const EPSILON_LADDER_BPS = Object.freeze([3, 6, 12, 25, 50, 100] as const)
/** A swap quote further than this from the index price is refused. */
export const SANITY_THRESHOLD_BPS = 100
/** The swap ladder gives up after this long. */
export const LADDER_DEADLINE_MS = 30_000
/** A swap retry older than this is abandoned with an alert. */
export const SWAP_RETRY_STALE_AFTER_MS = 30 * 60 * 1000

/** Native gas a swap needs before it starts (1.5e14 wei). */
export const SWAP_GAS_FLOOR_WEI = 150_000_000_000_000n
/** Native gas a deposit address needs before its sweep (1e12 wei). */
export const SWEEP_GAS_FLOOR_WEI = 1_000_000_000_000n
/** Native gas required for a whole conversion round before it starts (2e15 wei). */
export const ROUND_GAS_FLOOR_WEI = 2_000_000_000_000_000n
/** Margin left untouched by conversions, in USD. */
export const MARGIN_BUFFER_USD = '100'

/** Spec 3.2: the only withdrawal state that counts against the free balance. */
export const ACTIVE_WITHDRAWAL_STATES = Object.freeze(['requested'] as const)

/** Placing step of positions: maker orders are repriced within this window. */
export const MAKER_WINDOW_MS = 20 * 60 * 1000
/** The cycle lock's TTL in Redis. */
export const LOCK_TTL_MS = 2 * 60 * 1000
/** Wheel runner: retry of a failed step. */
export const WHEEL_RETRY_MS = 60_000
/** Wheel runner: no new attempts after this UTC time of day. */
export const WHEEL_DEADLINE_UTC = Object.freeze({ hour: 20, minute: 0 })
