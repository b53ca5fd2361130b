/**
 * Checking a proof of liabilities in the browser or in Node (docs/solvency.md "Proof of
 * liabilities"): the caller's proof (GET /portfolio/proof) recomputed up to the published root
 * (GET /proof-of-liabilities), and their own balances in it compared with their portfolio.
 *
 * The same construction as @wh/proof's `verifyProof` (packages/proof/src/tree.ts), written again
 * on WebCrypto: @wh/proof hashes with node:crypto, which a browser bundle cannot hold, and this
 * package stays free of server code. `proof.test.ts` checks both agree on proofs @wh/proof builds
 * and on every tampering of them.
 *
 * Bytes (sha256; amounts 32-byte big-endian, in the tree's currency order):
 * - leaf: sha256(0x00 ‖ salt ‖ sha256(utf8 user id) ‖ amounts)
 * - node: sha256(0x01 ‖ left hash ‖ left sums ‖ right hash ‖ right sums)
 */
import type { LiabilityProofBody, LiabilityRootBody, SummaryResponse } from './types.js'

/** A root as @wh/proof publishes it: totals as base-unit strings in the currency order. */
export interface PlainRoot {
  readonly currencies: readonly string[]
  readonly root: string
  readonly totals: readonly string[]
}

/** What `verifyLiabilityProof` checks: the proof fields of @wh/proof's LiabilityProof. */
export interface ProofInput {
  readonly currencies: readonly string[]
  readonly userId: string
  readonly salt: string
  readonly balances: readonly string[]
  readonly index: number
  readonly path: readonly { readonly hash: string; readonly sums: readonly string[] }[]
}

export type ProofVerification = { ok: true } | { ok: false; reason: string }

const AMOUNT_LIMIT = 1n << 256n
const DECIMAL = /^(0|[1-9][0-9]*)$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/** The API's root (totals as objects) or a plain one, as the plain shape. */
export function plainRoot(root: LiabilityRootBody | PlainRoot): PlainRoot {
  const totals = root.totals as readonly (string | { amount: string })[]
  return {
    currencies: root.currencies,
    root: root.root,
    totals: totals.map((t) => (typeof t === 'string' ? t : t.amount)),
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', concat(parts)))
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array((hex.length - 2) / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16)
  return out
}

function toHex(bytes: Uint8Array): string {
  let s = '0x'
  for (const b of bytes) s += b.toString(16).padStart(2, '0')
  return s
}

function amountBytes(amounts: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(32 * amounts.length)
  amounts.forEach((n, i) => {
    let v = n
    for (let k = 31; k >= 0; k--) {
      out[32 * i + k] = Number(v & 0xffn)
      v >>= 8n
    }
  })
  return out
}

function amounts(values: readonly string[], width: number, what: string): bigint[] | string {
  if (!Array.isArray(values)) return `${what}: not a list of amounts`
  if (values.length !== width) return `${what}: ${values.length} amounts for ${width} currencies`
  const out: bigint[] = []
  for (const v of values) {
    if (typeof v !== 'string' || !DECIMAL.test(v)) return `${what}: ${JSON.stringify(v)} is not a non-negative amount`
    const n = BigInt(v)
    if (n >= AMOUNT_LIMIT) return `${what}: an amount over 2^256`
    out.push(n)
  }
  return out
}

interface Node {
  readonly hash: Uint8Array
  readonly sums: readonly bigint[]
}

const LEAF = Uint8Array.of(0)
const NODE = Uint8Array.of(1)

async function nodeOf(left: Node, right: Node): Promise<Node> {
  return {
    hash: await sha256(NODE, left.hash, amountBytes(left.sums), right.hash, amountBytes(right.sums)),
    sums: left.sums.map((l, i) => l + (right.sums[i] ?? 0n)),
  }
}

/**
 * Recomputes the root from the proof and compares it with the published one: the hash and every
 * currency's total. Fails on a negative or malformed amount anywhere on the path, and says where.
 * The same answers as @wh/proof's `verifyProof`.
 */
export async function verifyLiabilityProof(
  proof: ProofInput | LiabilityProofBody,
  published: LiabilityRootBody | PlainRoot,
): Promise<ProofVerification> {
  const fail = (reason: string): ProofVerification => ({ ok: false, reason })
  const root = plainRoot(published)
  const width = root.currencies.length
  if (!Array.isArray(proof.currencies) || proof.currencies.join(',') !== root.currencies.join(','))
    return fail('the proof and the root list different currencies')
  if (!Array.isArray(proof.path)) return fail('the proof has no path')
  if (!Number.isInteger(proof.index) || proof.index < 0 || proof.index >= 2 ** proof.path.length)
    return fail('the index does not fit the path')
  const own = amounts(proof.balances, width, 'own balances')
  if (typeof own === 'string') return fail(own)
  for (const a of own) if (a >= AMOUNT_LIMIT) return fail('an amount must be between 0 and 2^256 - 1')
  if (typeof proof.salt !== 'string' || !HASH.test(proof.salt)) return fail('a salt is 32 bytes of hex (0x…)')
  if (typeof proof.userId !== 'string') return fail('the user id is not a string')
  let node: Node = {
    hash: await sha256(
      LEAF,
      fromHex(proof.salt),
      await sha256(new TextEncoder().encode(proof.userId)),
      amountBytes(own),
    ),
    sums: own,
  }
  let i = proof.index
  for (const [depth, step] of proof.path.entries()) {
    const sums = amounts(step?.sums, width, `sibling at depth ${depth}`)
    if (typeof sums === 'string') return fail(sums)
    if (typeof step.hash !== 'string' || !HASH.test(step.hash)) return fail(`sibling at depth ${depth}: not a hash`)
    const sibling = { hash: fromHex(step.hash), sums }
    node = i % 2 === 0 ? await nodeOf(node, sibling) : await nodeOf(sibling, node)
    i = Math.floor(i / 2)
  }
  if (node.sums.some((s) => s >= AMOUNT_LIMIT)) return fail('an amount must be between 0 and 2^256 - 1')
  if (toHex(node.hash) !== root.root.toLowerCase()) return fail('the path does not lead to the root')
  const totals = amounts(root.totals, width, 'published totals')
  if (typeof totals === 'string') return fail(totals)
  if (node.sums.some((s, k) => s !== totals[k])) return fail('the path sums to other totals than the published ones')
  return { ok: true }
}

/** A decimal string in a currency's unit (the portfolio's amounts) as base units. */
export function decimalToUnits(value: string, decimals: number): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value)
  if (!m) throw new RangeError(`not a decimal amount: ${JSON.stringify(value)}`)
  const [, sign, whole, frac = ''] = m
  if (frac.length > decimals) throw new RangeError(`${value} has more than ${decimals} decimals`)
  const units = BigInt(`${whole}${frac.padEnd(decimals, '0')}`)
  return sign === '-' ? -units : units
}

export interface BalanceMismatch {
  readonly currency: string
  /** base units in the proof's leaf */
  readonly inProof: string
  /** base units the portfolio shows now: transit (free + pending) plus subaccounts, a negative total as 0 */
  readonly inPortfolio: string
}

export type BalanceCheck = { ok: true } | { ok: false; mismatches: BalanceMismatch[] }

/**
 * Compares the balances in the caller's leaf with what their portfolio summary shows: per currency,
 * free balance + pending withdrawals + pending fundings (the transit account) + in subaccounts, a
 * negative total counted 0 as the tree counts it. The summary is of now and the leaf of the root's
 * `balancesAt`: anything that moved in between (a deposit, a fill, accrued interest) shows as a
 * mismatch, so compare right after a publication, or read the statement since `balancesAt`.
 */
export function checkOwnBalances(
  proof: Pick<ProofInput, 'currencies' | 'balances'>,
  summary: SummaryResponse,
): BalanceCheck {
  const portfolio = new Map<string, bigint>()
  for (const a of summary.assets) {
    const units = (v: string) => decimalToUnits(v, a.decimals)
    const total = units(a.freeBalance) + units(a.pendingWithdrawals) + units(a.pendingFundings) + units(a.inSubaccounts)
    portfolio.set(a.currency, total < 0n ? 0n : total)
  }
  const mismatches: BalanceMismatch[] = []
  const seen = new Set<string>()
  proof.currencies.forEach((currency, k) => {
    seen.add(currency)
    const inProof = BigInt(proof.balances[k] ?? '0')
    const inPortfolio = portfolio.get(currency) ?? 0n
    if (inProof !== inPortfolio)
      mismatches.push({ currency, inProof: inProof.toString(), inPortfolio: inPortfolio.toString() })
  })
  for (const [currency, inPortfolio] of portfolio)
    if (!seen.has(currency) && inPortfolio !== 0n)
      mismatches.push({ currency, inProof: '0', inPortfolio: inPortfolio.toString() })
  return mismatches.length === 0 ? { ok: true } : { ok: false, mismatches }
}
