import { randomBytes, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { buildTree, type LeafInput, type LiabilityProof, proofOf, rootOf, verifyProof } from './tree'

const salt = () => `0x${randomBytes(32).toString('hex')}`
function users(n: number): LeafInput[] {
  return Array.from({ length: n }, (_, i) => ({
    userId: randomUUID(),
    salt: salt(),
    balances: { USDC: BigInt(1_000_000 * (i + 1)), ...(i % 3 === 0 && { ETH: BigInt(10n ** 15n) * BigInt(i + 1) }) },
  }))
}

describe('the liabilities tree', () => {
  it('every user of trees of 1 to 9 leaves verifies against one root whose totals are the sums', () => {
    for (let n = 1; n <= 9; n++) {
      const leaves = users(n)
      const tree = buildTree(leaves)
      const root = rootOf(tree)
      expect(root.currencies).toEqual(n === 0 ? [] : ['ETH', 'USDC'])
      const usdc = leaves.reduce((a, l) => a + (l.balances.USDC ?? 0n), 0n)
      const eth = leaves.reduce((a, l) => a + (l.balances.ETH ?? 0n), 0n)
      expect(root.totals).toEqual([String(eth), String(usdc)])
      leaves.forEach((leaf, i) => {
        expect(verifyProof(proofOf(tree, i, leaf), root), `n=${n} i=${i}`).toEqual({ ok: true })
      })
    }
  })

  it('refuses a negative balance at build time', () => {
    const leaves = users(4)
    leaves[2] = { ...(leaves[2] as LeafInput), balances: { USDC: -1n } }
    expect(() => buildTree(leaves)).toThrow(/negative/)
  })

  describe('every single-field tampering fails', () => {
    const leaves = users(6)
    const tree = buildTree(leaves)
    const root = rootOf(tree)
    const good = proofOf(tree, 3, leaves[3] as LeafInput)
    const bump = (s: string) => String(BigInt(s) + 1n)
    const flipHex = (h: string) => `0x${h[2] === 'a' ? 'b' : 'a'}${h.slice(3)}`
    const tamper: Record<string, (p: LiabilityProof) => LiabilityProof> = {
      'own balance': (p) => ({ ...p, balances: [p.balances[0] as string, bump(p.balances[1] as string)] }),
      'own balance lowered to zero': (p) => ({ ...p, balances: ['0', p.balances[1] as string] }),
      salt: (p) => ({ ...p, salt: salt() }),
      'user id': (p) => ({ ...p, userId: randomUUID() }),
      'an index bit': (p) => ({ ...p, index: p.index ^ 1 }),
      'a sibling hash': (p) => ({
        ...p,
        path: p.path.map((s, i) => (i === 1 ? { ...s, hash: flipHex(s.hash) } : s)),
      }),
      'a sibling sum': (p) => ({
        ...p,
        path: p.path.map((s, i) => (i === 0 ? { ...s, sums: [s.sums[0] as string, bump(s.sums[1] as string)] } : s)),
      }),
      'a negative sibling sum': (p) => ({
        ...p,
        path: p.path.map((s, i) => (i === 2 ? { ...s, sums: [s.sums[0] as string, `-${s.sums[1]}`] } : s)),
      }),
      'a path step dropped': (p) => ({ ...p, path: p.path.slice(0, -1) }),
    }
    it('the untampered proof verifies', () => expect(verifyProof(good, root)).toEqual({ ok: true }))
    for (const [what, f] of Object.entries(tamper)) it(what, () => expect(verifyProof(f(good), root).ok).toBe(false))
    it('a published total', () => {
      expect(
        verifyProof(good, { ...root, totals: [root.totals[0] as string, bump(root.totals[1] as string)] }),
      ).toEqual({
        ok: false,
        reason: 'the path sums to other totals than the published ones',
      })
    })
    it('the published root', () => expect(verifyProof(good, { ...root, root: flipHex(root.root) }).ok).toBe(false))
  })

  it('a platform that hides a debt behind a negative node cannot make the path verify', () => {
    // the honest tree, and a forged sibling that subtracts user 0's balance from the total
    const leaves = users(2)
    const tree = buildTree(leaves)
    const proof = proofOf(tree, 1, leaves[1] as LeafInput)
    const forged = {
      ...proof,
      path: [{ ...(proof.path[0] as { hash: string; sums: string[] }), sums: ['0', '-1000000'] }],
    }
    expect(verifyProof(forged, rootOf(tree))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not a non-negative/),
    })
  })
})
