/**
 * The liabilities tree at scale (docs/solvency.md "Proof of liabilities"): build a tree of
 * LEAVES users holding two currencies, then one user's proof: its size and the time to verify it.
 *
 *   pnpm --filter @wh/proof bench            (1,000,000 leaves)
 *   tsx bench/tree.ts 100000                 fewer
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { buildTree, type LeafInput, proofOf, rootOf, verifyProof } from '../src/tree'

const LEAVES = Number(process.argv[2] ?? 1_000_000)
const leaves: LeafInput[] = new Array(LEAVES)
for (let i = 0; i < LEAVES; i++)
  leaves[i] = {
    userId: randomUUID(),
    salt: `0x${randomBytes(32).toString('hex')}`,
    balances: { USDC: BigInt(1 + (i % 100_000) * 1_000_000), ETH: BigInt(i % 7) * 10n ** 16n },
  }
const t0 = performance.now()
const tree = buildTree(leaves)
const buildMs = performance.now() - t0
const root = rootOf(tree)
const index = Math.floor(LEAVES / 3)
const proof = proofOf(tree, index, leaves[index] as LeafInput)
const bytes = Buffer.byteLength(JSON.stringify(proof))
const runs = 1_000
const v0 = performance.now()
for (let i = 0; i < runs; i++) if (!verifyProof(proof, root).ok) throw new Error('the proof does not verify')
const verifyMs = (performance.now() - v0) / runs
console.log(`
The liabilities tree: ${LEAVES.toLocaleString('en-US')} leaves, 2 currencies

| leaves | build (s) | depth | proof (JSON bytes) | hashes to verify | verify (ms) | heap used (MB) |
| -----: | --------: | ----: | -----------------: | ---------------: | ----------: | -------------: |
| ${LEAVES.toLocaleString('en-US')} | ${(buildMs / 1000).toFixed(2)} | ${proof.path.length} | ${bytes.toLocaleString('en-US')} | ${proof.path.length + 2} | ${verifyMs.toFixed(3)} | ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} |
`)
