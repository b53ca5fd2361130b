import { describe, expect, it } from 'vitest'
import { prepareLeaves, type Randomness, summarizeNegatives } from './leaves'
import { buildTree, proofOf, rootOf, verifyProof } from './tree'

/** Deterministic randomness: counting bytes, and a fixed sequence of picks. */
function fakeRandom(picks: number[] = []): Randomness {
  let b = 0
  return {
    bytes: (n) => Buffer.alloc(n, b++ % 256),
    int: (max) => (picks.shift() ?? 0) % max,
  }
}

const users = [
  { userId: 'a', balances: new Map([['USDC', 5n]]) },
  {
    userId: 'b',
    balances: new Map([
      ['USDC', -3n],
      ['ETH', 2n],
    ]),
  },
  { userId: 'c', balances: { BTC: 0n } },
]

describe('prepareLeaves', () => {
  it('counts a negative total as 0 and reports it; keeps every currency', () => {
    const p = prepareLeaves(users, fakeRandom())
    expect(p.currencies).toEqual(['BTC', 'ETH', 'USDC'])
    expect(p.negatives).toEqual([{ userId: 'b', currency: 'USDC', amount: -3n }])
    const b = p.leaves.find((l) => l.userId === 'b')
    expect(b?.balances).toEqual({ USDC: 0n, ETH: 2n })
    const tree = buildTree(p.leaves, p.currencies)
    expect(rootOf(tree).totals).toEqual(['0', '2', '5'])
  })

  it('gives each user a fresh 32-byte salt', () => {
    const p = prepareLeaves(users, fakeRandom())
    const salts = p.leaves.map((l) => l.salt)
    expect(new Set(salts).size).toBe(3)
    for (const s of salts) expect(s).toMatch(/^0x[0-9a-f]{64}$/)
  })

  it('shuffles: the order is the randomness, every user once', () => {
    // Fisher-Yates from the end: i=2 swaps with 0, then i=1 with 1
    const p = prepareLeaves(users, fakeRandom([0, 1]))
    expect(p.leaves.map((l) => l.userId)).toEqual(['c', 'b', 'a'])
    const q = prepareLeaves(users, fakeRandom([2, 0]))
    expect(q.leaves.map((l) => l.userId)).toEqual(['b', 'a', 'c'])
  })

  it("each leaf's proof verifies, the index being its position", () => {
    const p = prepareLeaves(users, fakeRandom([1, 0]))
    const tree = buildTree(p.leaves, p.currencies)
    for (const [i, leaf] of p.leaves.entries())
      expect(verifyProof(proofOf(tree, i, leaf), rootOf(tree))).toEqual({ ok: true })
  })

  it('summarizes negatives per currency: users and sum', () => {
    expect(
      summarizeNegatives([
        { userId: 'a', currency: 'USDC', amount: -3n },
        { userId: 'b', currency: 'USDC', amount: -4n },
        { userId: 'b', currency: 'ETH', amount: -1n },
      ]),
    ).toEqual({ ETH: { users: 1, amount: '-1' }, USDC: { users: 2, amount: '-7' } })
    expect(summarizeNegatives([])).toEqual({})
  })
})
