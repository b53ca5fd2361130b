/**
 * Checks a proof of liabilities (docs/solvency.md "Proof of liabilities") against a published root,
 * with nothing of the platform's code but this package's verifier.
 *
 *   pnpm exec tsx packages/client/src/cli/verify-proof.ts proof.json root.json
 *   pnpm exec tsx packages/client/src/cli/verify-proof.ts proof.json --api https://api.example
 *   pnpm exec tsx packages/client/src/cli/verify-proof.ts proof.json --api https://api.example --token <jwt>
 *
 * `proof.json`: the body of GET /portfolio/proof (`{ root, proof }`) or the proof alone.
 * `root.json`: the body of GET /proof-of-liabilities, or `{ currencies, root, totals }` with totals as
 * base-unit strings. With `--api`, the root is the one the API publishes under the proof file's root
 * id (found in /proof-of-liabilities/roots), else the latest; a root in the proof file that differs
 * from the published one fails. With `--token`, the proof's balances are also compared with the
 * caller's portfolio now (GET /portfolio/summary): anything that moved since the root's
 * `balancesAt` shows as a difference.
 *
 * Prints `OK …` and exits 0, or `FAIL: <the first failure>` and exits 1; 2 on bad usage.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { ApiClient } from '../api.js'
import { checkOwnBalances, type PlainRoot, type ProofInput, plainRoot, verifyLiabilityProof } from '../proof.js'
import type { LiabilityRootBody } from '../types.js'

const USAGE =
  'usage: verify-proof.ts <proof.json> <root.json>\n' +
  '       verify-proof.ts <proof.json> --api <base url> [--token <bearer token>]'

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`)
  process.exit(2)
}

function fail(message: string): never {
  console.log(`FAIL: ${message}`)
  process.exit(1)
}

function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    return usage(`cannot read ${path}: ${(e as Error).message}`)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

const { values, positionals } = (() => {
  try {
    return parseArgs({ allowPositionals: true, options: { api: { type: 'string' }, token: { type: 'string' } } })
  } catch (e) {
    return usage((e as Error).message)
  }
})()
const [proofPath, rootPath, ...extra] = positionals
if (!proofPath || extra.length > 0) usage('one proof file is required')
if ((rootPath === undefined) === (values.api === undefined)) usage('give either a root file or --api, not both')
if (values.token !== undefined && values.api === undefined) usage('--token needs --api')

const file = readJsonFile(proofPath)
const proof = (isObject(file) && isObject(file.proof) ? file.proof : file) as ProofInput
const fileRoot = isObject(file) && isObject(file.root) ? (file.root as unknown as LiabilityRootBody) : undefined
if (!isObject(proof) || !Array.isArray(proof.path)) usage(`${proofPath} holds no proof`)

let root: PlainRoot
let label: string
if (rootPath !== undefined) {
  const r = readJsonFile(rootPath)
  if (!isObject(r) || typeof r.root !== 'string' || !Array.isArray(r.currencies) || !Array.isArray(r.totals))
    usage(`${rootPath} holds no root`)
  root = plainRoot(r as unknown as PlainRoot)
  label = root.root
} else {
  const api = new ApiClient({ baseUrl: values.api as string, token: () => values.token })
  let published: LiabilityRootBody | undefined
  try {
    published = await api.liabilityRoot()
    if (fileRoot?.id && published.id !== fileRoot.id) {
      published = undefined
      let cursor: string | undefined
      do {
        const page = await api.liabilityRoots({ limit: 100, ...(cursor && { cursor }) })
        published = page.items.find((r) => r.id === fileRoot.id)
        cursor = page.nextCursor ?? undefined
      } while (!published && cursor)
    }
  } catch (e) {
    fail(`the API answered: ${(e as Error).message}`)
  }
  if (!published) fail(`the API publishes no root ${fileRoot?.id}`)
  if (fileRoot && fileRoot.root !== published.root)
    fail(`the proof file's root ${fileRoot.root} is not the one published under ${published.id}: ${published.root}`)
  root = plainRoot(published)
  label = `${published.root} (${published.id}, published ${published.publishedAt}, balances at ${published.balancesAt})`
}

const result = await verifyLiabilityProof(proof, root)
if (!result.ok) fail(result.reason)

if (values.token !== undefined) {
  const api = new ApiClient({ baseUrl: values.api as string, token: () => values.token })
  const check = checkOwnBalances(proof, await api.portfolioSummary())
  if (!check.ok) {
    const m = check.mismatches[0]
    fail(
      `own balance in ${m?.currency}: ${m?.inProof} in the proof, ${m?.inPortfolio} in the portfolio now ` +
        '(base units; a movement since the root was built shows here too)',
    )
  }
}
const own = proof.currencies.map((c, k) => `${c} ${proof.balances[k]}`).join(', ')
console.log(`OK: user ${proof.userId} with ${own} (base units) is counted in root ${label}`)
