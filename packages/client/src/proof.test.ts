/**
 * The client's verifier against @wh/proof's: on the proofs @wh/proof builds (trees of 1 to 40
 * leaves, one to three currencies, amounts up to 2^200), and on every single-field tampering of
 * them, both give the same answer and the same reason.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { buildTree, type LeafInput, type LiabilityProof, proofOf, rootOf, verifyProof } from '@wh/proof'
import { describe, expect, it } from 'vitest'
import { checkOwnBalances, decimalToUnits, plainRoot, verifyLiabilityProof } from './proof.js'
import type { SummaryResponse } from './types.js'

const salt = () => `0x${randomBytes(32).toString('hex')}`
const CURRENCIES = ['BTC', 'ETH', 'USDC']

/** A small deterministic PRNG (mulberry32), so a failure replays. */
function prng(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function leavesOf(n: number, width: number, rnd: () => number): LeafInput[] {
  return Array.from({ length: n }, () => {
    const balances: Record<string, bigint> = {}
    for (const c of CURRENCIES.slice(0, width)) {
      const r = rnd()
      balances[c] = r < 0.2 ? 0n : r < 0.3 ? (1n << 200n) + BigInt(Math.floor(r * 1e9)) : BigInt(Math.floor(r * 1e15))
    }
    return { userId: randomUUID(), salt: salt(), balances }
  })
}

const bump = (s: string) => String(BigInt(s) + 1n)
const flipHex = (h: string) => `0x${h[2] === 'a' ? 'b' : 'a'}${h.slice(3)}`
const tamperings: Record<string, (p: LiabilityProof) => LiabilityProof> = {
  'own balance': (p) => ({ ...p, balances: p.balances.map((b, i) => (i === 0 ? bump(b) : b)) }),
  'own balance to zero': (p) => ({ ...p, balances: p.balances.map(() => '0') }),
  'own balance negative': (p) => ({ ...p, balances: p.balances.map((b) => `-${b}`) }),
  'own balance not decimal': (p) => ({ ...p, balances: p.balances.map(() => '1e3') }),
  salt: (p) => ({ ...p, salt: salt() }),
  'salt malformed': (p) => ({ ...p, salt: '0x1234' }),
  'user id': (p) => ({ ...p, userId: randomUUID() }),
  'an index bit': (p) => ({ ...p, index: p.index ^ 1 }),
  'index too large': (p) => ({ ...p, index: 2 ** p.path.length }),
  'index negative': (p) => ({ ...p, index: -1 }),
  'a sibling hash': (p) => ({ ...p, path: p.path.map((s, i) => (i === 0 ? { ...s, hash: flipHex(s.hash) } : s)) }),
  'a sibling hash malformed': (p) => ({ ...p, path: p.path.map((s, i) => (i === 0 ? { ...s, hash: '0xzz' } : s)) }),
  'a sibling sum': (p) => ({
    ...p,
    path: p.path.map((s, i) => (i === p.path.length - 1 ? { ...s, sums: s.sums.map(bump) } : s)),
  }),
  'a negative sibling sum': (p) => ({
    ...p,
    path: p.path.map((s, i) => (i === 0 ? { ...s, sums: s.sums.map((x) => `-${x}`) } : s)),
  }),
  'a sibling with a sum missing': (p) => ({ ...p, path: p.path.map((s) => ({ ...s, sums: s.sums.slice(1) })) }),
  'a path step dropped': (p) => ({ ...p, path: p.path.slice(0, -1) }),
  'a path step added': (p) => ({ ...p, path: [...p.path, p.path[0] ?? { hash: `0x${'00'.repeat(32)}`, sums: [] }] }),
  'a currency renamed': (p) => ({ ...p, currencies: p.currencies.map((c, i) => (i === 0 ? 'AAA' : c)) }),
}

describe('verifyLiabilityProof (WebCrypto) agrees with @wh/proof', () => {
  it("on every leaf's proof of trees of 1 to 40 leaves and 1 to 3 currencies", async () => {
    const rnd = prng(7)
    for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 40]) {
      const width = 1 + (n % 3)
      const leaves = leavesOf(n, width, rnd)
      const tree = buildTree(leaves)
      const root = rootOf(tree)
      for (const [i, leaf] of leaves.entries()) {
        const proof = proofOf(tree, i, leaf)
        expect(verifyProof(proof, root)).toEqual({ ok: true })
        expect(await verifyLiabilityProof(proof, root), `n=${n} i=${i}`).toEqual({ ok: true })
      }
    }
  })

  it('on every single-field tampering, with the same reason', async () => {
    const rnd = prng(11)
    for (const n of [2, 6, 13]) {
      const leaves = leavesOf(n, n === 2 ? 1 : 2, rnd)
      const tree = buildTree(leaves)
      const root = rootOf(tree)
      for (const i of [0, n - 1]) {
        const good = proofOf(tree, i, leaves[i] as LeafInput)
        for (const [what, f] of Object.entries(tamperings)) {
          const bad = f(good)
          const expected = verifyProof(bad, root)
          const got = await verifyLiabilityProof(bad, root)
          expect(got.ok, `${what} n=${n} i=${i}`).toBe(false)
          expect(got, `${what} n=${n} i=${i}`).toEqual(expected)
        }
        const roots = {
          'a published total': { ...root, totals: root.totals.map((t, k) => (k === 0 ? bump(t) : t)) },
          'the published root': { ...root, root: flipHex(root.root) },
          'a total malformed': { ...root, totals: root.totals.map(() => '-1') },
          'other currencies': { ...root, currencies: ['XYZ', ...root.currencies.slice(1)] },
        }
        for (const [what, r] of Object.entries(roots)) {
          const got = await verifyLiabilityProof(good, r)
          expect(got.ok, what).toBe(false)
          expect(got, what).toEqual(verifyProof(good, r))
        }
      }
    }
  })

  it("accepts the API's root, totals as objects", async () => {
    const leaves = leavesOf(3, 2, prng(3))
    const tree = buildTree(leaves)
    const root = rootOf(tree)
    const api = {
      id: randomUUID(),
      root: root.root,
      currencies: [...root.currencies],
      totals: root.currencies.map((currency, k) => ({
        currency,
        decimals: 0,
        amount: root.totals[k] as string,
        value: root.totals[k] as string,
      })),
      leafCount: 3,
      depth: 2,
      publishedAt: new Date().toISOString(),
      balancesAt: new Date().toISOString(),
    }
    expect(plainRoot(api)).toEqual(root)
    expect(await verifyLiabilityProof(proofOf(tree, 1, leaves[1] as LeafInput), api)).toEqual({ ok: true })
  })
})

describe('checkOwnBalances', () => {
  const asset = (currency: string, decimals: number, o: Partial<Record<string, string>>) => ({
    currency,
    decimals,
    freeBalance: o.free ?? '0',
    inSubaccounts: o.sub ?? '0',
    pendingWithdrawals: o.pw ?? '0',
    pendingFundings: o.pf ?? '0',
    income: { premium: '0', interest: '0', funding: '0' },
    expenses: { exchangeFee: '0', settlement: '0', swap: '0', borrow: '0' },
    netDeposits: '0',
    periodReturn: '0',
  })
  const summary = (assets: ReturnType<typeof asset>[]): SummaryResponse => ({
    from: new Date().toISOString(),
    to: new Date().toISOString(),
    assets,
    subaccounts: [],
  })
  const proof = { currencies: ['ETH', 'USDC'], balances: ['1500000000000000000', '250000000'] }

  it('transit (free + pending) plus subaccounts per currency equals the leaf', () => {
    const s = summary([
      asset('ETH', 18, { free: '1.5' }),
      asset('USDC', 6, { free: '100.000000', pw: '20', pf: '30', sub: '100' }),
    ])
    expect(checkOwnBalances(proof, s)).toEqual({ ok: true })
  })

  it('names each currency that differs, and one the proof lacks', () => {
    const s = summary([
      asset('ETH', 18, { free: '1.4' }),
      asset('USDC', 6, { free: '250' }),
      asset('BTC', 8, { free: '0.00000001' }),
    ])
    expect(checkOwnBalances(proof, s)).toEqual({
      ok: false,
      mismatches: [
        { currency: 'ETH', inProof: '1500000000000000000', inPortfolio: '1400000000000000000' },
        { currency: 'BTC', inProof: '0', inPortfolio: '1' },
      ],
    })
  })

  it('a negative total counts 0, as in the tree', () => {
    const s = summary([asset('ETH', 18, { free: '1.5' }), asset('USDC', 6, { free: '-5', sub: '-1' })])
    expect(checkOwnBalances({ ...proof, balances: [proof.balances[0] as string, '0'] }, s)).toEqual({ ok: true })
  })

  it('decimalToUnits', () => {
    expect(decimalToUnits('1.5', 18)).toBe(1_500_000_000_000_000_000n)
    expect(decimalToUnits('-0.000001', 6)).toBe(-1n)
    expect(decimalToUnits('7', 0)).toBe(7n)
    expect(() => decimalToUnits('0.1234567', 6)).toThrow(/decimals/)
    expect(() => decimalToUnits('1e5', 6)).toThrow(/decimal/)
  })
})
