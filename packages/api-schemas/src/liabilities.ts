/**
 * Schemas of the proof of liabilities (docs/solvency.md "Proof of liabilities"): the published
 * roots (public, GET /proof-of-liabilities and /proof-of-liabilities/roots) and the caller's proof
 * (GET /portfolio/proof). Amounts in a proof are decimal strings of base units, exactly what the
 * hashes cover; a root's totals carry the formatted amount too.
 */
import Type from 'typebox'

export const ROOTS_PAGE_LIMIT_MAX = 100
export const ROOTS_PAGE_LIMIT_DEFAULT = 30

const Hash = (description: string) => Type.String({ pattern: '^0x[0-9a-f]{64}$', description })
const BaseUnits = (description: string) =>
  Type.String({ pattern: '^(0|[1-9][0-9]*)$', description: `${description}; decimal string of base units` })
const Timestamp = (description: string) => Type.String({ format: 'date-time', description })

export const RootTotal = Type.Object({
  currency: Type.String(),
  decimals: Type.Integer({ description: 'places of `value` (0 for a currency without known decimals)' }),
  amount: BaseUnits('the sum of every leaf in this currency'),
  value: Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', description: "`amount` in the currency's unit" }),
})

export const LiabilityRoot = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    root: Hash("the Merkle-sum tree's root hash (sha256)"),
    currencies: Type.Array(Type.String(), {
      description: 'the order in which every amount of the tree, its proofs and `totals` is given',
    }),
    totals: Type.Array(RootTotal, { description: 'one per currency, in the order of `currencies`' }),
    leafCount: Type.Integer({ description: 'users in the tree' }),
    depth: Type.Integer({ description: 'steps of every path' }),
    publishedAt: Timestamp('when the root was published'),
    balancesAt: Timestamp("the time of the ledger's snapshot the balances were read in"),
  },
  { title: 'LiabilityRoot' },
)

export const RootsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: ROOTS_PAGE_LIMIT_MAX, default: ROOTS_PAGE_LIMIT_DEFAULT }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: '`nextCursor` of the previous page' }),
    ),
  },
  { additionalProperties: false },
)
export type RootsQueryValue = Type.Static<typeof RootsQuery>

export const RootsResponse = Type.Object({
  items: Type.Array(LiabilityRoot, { description: 'newest first' }),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})

export const PathStep = Type.Object(
  {
    hash: Hash("the sibling's hash"),
    sums: Type.Array(BaseUnits("the sibling's sum in a currency"), { description: 'in the order of `currencies`' }),
  },
  { title: 'ProofStep' },
)

/** What the caller keeps to check their balances are counted in the root (@wh/proof LiabilityProof). */
export const LiabilityProof = Type.Object(
  {
    currencies: Type.Array(Type.String()),
    userId: Type.String({ format: 'uuid' }),
    salt: Hash('32 random bytes of this leaf, fresh in every tree'),
    balances: Type.Array(BaseUnits('what the platform owed the caller in a currency (a negative total counts 0)'), {
      description: 'in the order of `currencies`',
    }),
    index: Type.Integer({ minimum: 0, description: "the leaf's position: bit k says the side at step k" }),
    path: Type.Array(PathStep, { description: "siblings from the leaf's level up to the root's children" }),
  },
  { title: 'LiabilityProof' },
)

export const PortfolioProofResponse = Type.Object({
  root: LiabilityRoot,
  proof: LiabilityProof,
})
