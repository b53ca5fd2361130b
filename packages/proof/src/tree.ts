/**
 * A Merkle-sum tree of users' liabilities (docs/solvency.md "Proof of liabilities"), pure: no I/O.
 *
 * Every node carries, per currency, the sum of the balances below it, and its hash covers both
 * children's hashes and both children's sums. A user who holds their leaf and the path to a
 * published root can recompute the root's hash and totals; every sum on the path must be
 * non-negative and equal its children's, so no balance can be left out, lowered by a negative
 * sibling, or changed without changing the root.
 *
 * Bytes (sha256 throughout; amounts as 32-byte big-endian unsigned, in the tree's currency order):
 * - leaf:    sha256(0x00 ‖ salt (32 bytes) ‖ sha256(utf8 user id) ‖ amounts)
 * - node:    sha256(0x01 ‖ left hash ‖ left sums ‖ right hash ‖ right sums)
 * - padding: sha256(0x02), sums zero (a level of odd length is completed with it)
 */
import { hash } from 'node:crypto'

/** 2^256: an amount must fit 32 bytes. */
const AMOUNT_LIMIT = 1n << 256n

export interface LeafInput {
  readonly userId: string
  /** 32 random bytes, hex (0x…): makes the leaf hash unguessable from the user id and balances */
  readonly salt: string
  /** base units per currency of the tree; a currency not named is 0 */
  readonly balances: Readonly<Record<string, bigint>>
}

export interface TreeNode {
  readonly hash: Buffer
  readonly sums: readonly bigint[]
  /** the sums as encoded in the parent's hash (kept: each node's sums are encoded once) */
  readonly encoded: Buffer
}

export interface Tree {
  /** the currencies, in the order their amounts are encoded (sorted) */
  readonly currencies: readonly string[]
  /** levels[0] the leaves (with padding), the last level the root alone */
  readonly levels: readonly (readonly TreeNode[])[]
  readonly leafCount: number
}

export interface PathStep {
  /** the sibling's hash, 0x… */
  readonly hash: string
  /** the sibling's sums, decimal strings in the tree's currency order */
  readonly sums: readonly string[]
}

/** What a user holds to check their balance is counted in a published root. */
export interface LiabilityProof {
  readonly currencies: readonly string[]
  readonly userId: string
  readonly salt: string
  /** decimal strings in the tree's currency order */
  readonly balances: readonly string[]
  readonly index: number
  /** siblings from the leaf's level up to the root's children */
  readonly path: readonly PathStep[]
}

export interface PublishedRoot {
  readonly currencies: readonly string[]
  /** 0x… */
  readonly root: string
  /** decimal strings in the currency order */
  readonly totals: readonly string[]
}

/** One-shot sha256 of the parts, concatenated (crypto.hash: about half the cost of createHash). */
const sha256 = (...parts: Buffer[]): Buffer =>
  hash('sha256', parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts), 'buffer')

const WORD = (1n << 64n) - 1n

/** The amounts, 32 bytes big-endian each (four 64-bit words). */
function sumsBytes(sums: readonly bigint[]): Buffer {
  const out = Buffer.allocUnsafe(32 * sums.length)
  sums.forEach((n, i) => {
    if (n < 0n || n >= AMOUNT_LIMIT) throw new RangeError('an amount must be between 0 and 2^256 - 1')
    const o = 32 * i
    if (n <= WORD) {
      out.fill(0, o, o + 24)
      out.writeBigUInt64BE(n, o + 24)
    } else {
      out.writeBigUInt64BE((n >> 192n) & WORD, o)
      out.writeBigUInt64BE((n >> 128n) & WORD, o + 8)
      out.writeBigUInt64BE((n >> 64n) & WORD, o + 16)
      out.writeBigUInt64BE(n & WORD, o + 24)
    }
  })
  return out
}

function saltBytes(salt: string): Buffer {
  if (!/^0x[0-9a-fA-F]{64}$/.test(salt)) throw new RangeError('a salt is 32 bytes of hex (0x…)')
  return Buffer.from(salt.slice(2), 'hex')
}

const LEAF_TAG = Buffer.from([0])
const NODE_TAG = Buffer.from([1])

export function leafOf(userId: string, salt: string, amounts: readonly bigint[]): TreeNode {
  const encoded = sumsBytes(amounts)
  return {
    hash: sha256(LEAF_TAG, saltBytes(salt), sha256(Buffer.from(userId, 'utf8')), encoded),
    sums: amounts,
    encoded,
  }
}

export function nodeOf(left: TreeNode, right: TreeNode): TreeNode {
  const sums = left.sums.map((l, i) => l + (right.sums[i] ?? 0n))
  return {
    hash: sha256(NODE_TAG, left.hash, left.encoded, right.hash, right.encoded),
    sums,
    encoded: sumsBytes(sums),
  }
}

const PADDING_HASH = sha256(Buffer.from([2]))
const padding = (width: number): TreeNode => {
  const sums = Array<bigint>(width).fill(0n)
  return { hash: PADDING_HASH, sums, encoded: sumsBytes(sums) }
}

/** The tree's currency order: every currency any leaf names, sorted. */
export function currenciesOf(leaves: readonly LeafInput[]): string[] {
  const set = new Set<string>()
  for (const l of leaves) for (const c of Object.keys(l.balances)) set.add(c)
  return [...set].sort()
}

/**
 * Builds the tree of `leaves` in the given order (the caller shuffles or sorts; a user's index is
 * their position). A negative balance is refused: the platform cannot owe less than nothing.
 */
export function buildTree(leaves: readonly LeafInput[], currencies = currenciesOf(leaves)): Tree {
  if (leaves.length === 0) throw new RangeError('a tree needs at least one leaf')
  const width = currencies.length
  let level: TreeNode[] = leaves.map((l) => {
    for (const c of Object.keys(l.balances))
      if (!currencies.includes(c)) throw new RangeError(`currency ${c} is not in the tree`)
    const amounts = currencies.map((c) => l.balances[c] ?? 0n)
    if (amounts.some((a) => a < 0n)) throw new RangeError(`a negative balance for user ${l.userId}`)
    return leafOf(l.userId, l.salt, amounts)
  })
  const levels: TreeNode[][] = []
  while (true) {
    if (level.length > 1 && level.length % 2 === 1) level.push(padding(width))
    levels.push(level)
    if (level.length === 1) break
    const next: TreeNode[] = new Array(level.length / 2)
    for (let i = 0; i < level.length; i += 2) next[i / 2] = nodeOf(level[i] as TreeNode, level[i + 1] as TreeNode)
    level = next
  }
  return { currencies, levels, leafCount: leaves.length }
}

export function rootOf(tree: Tree): PublishedRoot {
  const root = tree.levels.at(-1)?.[0] as TreeNode
  return {
    currencies: tree.currencies,
    root: `0x${root.hash.toString('hex')}`,
    totals: root.sums.map(String),
  }
}

/** The proof of the leaf at `index` (its inputs come from the caller's stored leaf). */
export function proofOf(tree: Tree, index: number, leaf: LeafInput): LiabilityProof {
  if (!Number.isInteger(index) || index < 0 || index >= tree.leafCount) throw new RangeError('no such leaf')
  const path: PathStep[] = []
  let i = index
  for (const level of tree.levels.slice(0, -1)) {
    const sibling = level[i ^ 1] as TreeNode
    path.push({ hash: `0x${sibling.hash.toString('hex')}`, sums: sibling.sums.map(String) })
    i >>= 1
  }
  return {
    currencies: tree.currencies,
    userId: leaf.userId,
    salt: leaf.salt,
    balances: tree.currencies.map((c) => String(leaf.balances[c] ?? 0n)),
    index,
    path,
  }
}

export type Verification = { ok: true } | { ok: false; reason: string }

const DECIMAL = /^(0|[1-9][0-9]*)$/

function amounts(values: readonly string[], width: number, what: string): bigint[] | string {
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

/**
 * Recomputes the root from `proof` and compares it with the published one: the hash, and the
 * totals of every currency. Fails on a negative or malformed amount anywhere on the path.
 */
export function verifyProof(proof: LiabilityProof, published: PublishedRoot): Verification {
  const fail = (reason: string): Verification => ({ ok: false, reason })
  const width = published.currencies.length
  if (proof.currencies.join(',') !== published.currencies.join(','))
    return fail('the proof and the root list different currencies')
  if (!Number.isInteger(proof.index) || proof.index < 0 || proof.index >= 2 ** proof.path.length)
    return fail('the index does not fit the path')
  const own = amounts(proof.balances, width, 'own balances')
  if (typeof own === 'string') return fail(own)
  let node: TreeNode
  try {
    node = leafOf(proof.userId, proof.salt, own)
  } catch (e) {
    return fail((e as Error).message)
  }
  let i = proof.index
  for (const [depth, step] of proof.path.entries()) {
    const sums = amounts(step.sums, width, `sibling at depth ${depth}`)
    if (typeof sums === 'string') return fail(sums)
    if (!/^0x[0-9a-fA-F]{64}$/.test(step.hash)) return fail(`sibling at depth ${depth}: not a hash`)
    const sibling = { hash: Buffer.from(step.hash.slice(2), 'hex'), sums, encoded: sumsBytes(sums) }
    node = i % 2 === 0 ? nodeOf(node, sibling) : nodeOf(sibling, node)
    i = Math.floor(i / 2)
  }
  if (`0x${node.hash.toString('hex')}` !== published.root.toLowerCase())
    return fail('the path does not lead to the root')
  const totals = amounts(published.totals, width, 'published totals')
  if (typeof totals === 'string') return fail(totals)
  if (node.sums.some((s, k) => s !== totals[k])) return fail('the path sums to other totals than the published ones')
  return { ok: true }
}
