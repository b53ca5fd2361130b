/**
 * Table owners (docs/architecture.md "Table owners"): a table listed in TABLE_OWNERS is written
 * only by its owner's files. The check scans the service's source (apps/*\/src, packages/*\/src;
 * not tests, benches, scripts or migrations) for SQL that writes a table, in postgres.js tagged
 * templates and raw SQL strings alike, and for drizzle's insert/update/delete of the table.
 * Reads stay wherever they are useful (read models).
 *
 * To add a table: give it an entry below once its writes all live in one module, and let this
 * test prove it. A table written through a function (a SQL function of a migration, or the
 * TypeScript function that calls it) lists that function in `writers`; calling it is a write. A table
 * written only by triggers names its migration as the owner: then no service source may write it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

interface TableOwner {
  /** the owner's files: a folder ending in '/' (every file under it) or one file, from the repository root */
  readonly owner: readonly string[]
  /** functions whose call writes the table (a SQL function, the TypeScript function around it) */
  readonly writers?: readonly string[]
  /** files outside the owner that may call `writers` on its behalf, with why */
  readonly delegates?: Readonly<Record<string, string>>
}

const TABLE_OWNERS: Readonly<Record<string, TableOwner>> = {
  subaccount_releases: { owner: ['packages/subaccounts/src/releases.ts'] },
  // a funding is reserved by the ledger (ledger_reserve_funding: the transit lock and the free-balance
  // check are the ledger's), which inserts the row and creates the subaccount on first need
  subaccount_transfers: {
    owner: ['packages/subaccounts/src/transfers.ts'],
    writers: ['ledger_reserve_funding', 'reserveFunding'],
    delegates: {
      'packages/ledger/src/reserve.ts':
        "the reserve inserts the funding (ledger_reserve_funding: the transit lock and the free-balance check are the ledger's); only the owner calls reserveFunding",
    },
  },
  subaccounts: {
    owner: ['packages/subaccounts/src/subaccounts.ts'],
    writers: ['ledger_reserve_funding', 'reserveFunding'],
    delegates: {
      'packages/ledger/src/reserve.ts':
        'the funding reserve creates the subaccount on first need (ledger_reserve_funding, one statement under the transit lock)',
      'packages/subaccounts/src/transfers.ts':
        "reserveFundingTransfer, the one caller of the ledger's reserveFunding, which creates the subaccount with the funding row",
    },
  },
  withdrawals: {
    owner: ['packages/withdrawals/src/'],
    writers: ['ledger_reserve_withdrawal', 'reserveWithdrawal'],
    delegates: {
      'packages/ledger/src/reserve.ts':
        "the reserve inserts the request (ledger_reserve_withdrawal: the transit lock and the free-balance check are the ledger's); only the owner calls reserveWithdrawal",
    },
  },
  treasury_withdrawals: { owner: ['packages/treasury/src/treasury/store.ts'] },
  cctp_transfers: { owner: ['packages/treasury/src/cctp/store.ts'] },
  platform_stops: { owner: ['packages/ops/src/platform-stop.ts'] },
  signal_state: { owner: ['packages/trading/src/signal-state.ts'] },
  operator_actions: { owner: ['packages/ops/src/actions.ts'] },
  // operators are written by the schema owner only (the operators CLI); sessions by the desk's sign-in
  operators: { owner: ['packages/ops/src/operators.ts'] },
  operator_sessions: { owner: ['packages/ops/src/operators.ts'] },
  operator_proposals: { owner: ['packages/ops/src/proposals.ts'] },
  operator_approvals: { owner: ['packages/ops/src/proposals.ts'] },
  operator_proposal_outcomes: { owner: ['packages/ops/src/proposals.ts'] },
  // the balance check's sums and its record (docs/solvency.md "Balances against postings")
  ledger_check_sums: { owner: ['packages/ledger/src/balance-check.ts'] },
  ledger_checks: { owner: ['packages/ledger/src/balance-check.ts'] },
  solvency_runs: { owner: ['packages/solvency/src/runs.ts'] },
  solvency_deficits: { owner: ['packages/solvency/src/runs.ts'] },
  platform_wallets: { owner: ['packages/wallet/src/platform-wallets.ts'] },
  deposit_addresses: { owner: ['packages/wallet/src/deposit-addresses.ts'] },
  chain_cursors: { owner: ['packages/wallet/src/chain-cursors.ts'] },
  outbound_txs: { owner: ['packages/wallet/src/outbox-store.ts'] },
  outbound_tx_versions: { owner: ['packages/wallet/src/outbox-store.ts'] },
  liability_roots: { owner: ['packages/proof/src/store.ts'] },
  liability_tree_nodes: { owner: ['packages/proof/src/store.ts'] },
  liability_tree_leaves: { owner: ['packages/proof/src/store.ts'] },
  wheel_decisions: { owner: ['packages/trading/src/decisions.ts'] },
  deposits: { owner: ['packages/deposits/src/transitions.ts'] },
  deposit_surpluses: { owner: ['packages/deposits/src/audit/store.ts'] },
  deposit_audit_cursors: { owner: ['packages/deposits/src/audit/store.ts'] },
  deposit_balance_audits: { owner: ['packages/deposits/src/audit/store.ts'] },
  users: { owner: ['apps/api/src/routes/auth/users.ts'] },
  siwe_nonces: { owner: ['apps/api/src/routes/auth/nonces.ts'] },
  price_candles: { owner: ['packages/market/src/candle-store.ts'] },
  swaps: { owner: ['packages/swap/src/store.ts'] },
  // the journal: appended only through the ledger's SQL functions (ledger_append and the reserves,
  // defined by the migrations), which packages/ledger calls; a trigger refuses UPDATE and DELETE
  ledger_events: { owner: ['packages/ledger/src/', 'drizzle/'] },
  ledger_postings: { owner: ['packages/ledger/src/', 'drizzle/'] },
  ledger_balances: { owner: ['packages/ledger/src/', 'drizzle/'] },
  positions: { owner: ['packages/trading/src/position-store.ts'] },
  position_fills: { owner: ['packages/trading/src/fill-store.ts'] },
  wheels: { owner: ['packages/trading/src/wheel-store.ts'] },
  conversions: { owner: ['packages/trading/src/conversions/store.ts'] },
  // written by the deferred triggers of 0021 only (docs/account-stream.md): no code path may insert
  // an event or bump a counter itself, nor call the function the triggers share
  account_events: { owner: ['drizzle/0021_account_events.sql'], writers: ['account_event_emit'] },
  account_event_seqs: { owner: ['drizzle/0021_account_events.sql'], writers: ['account_event_emit'] },
  // counted by the deferred triggers of 0046 only (docs/architecture.md "Business failures"), as the
  // failures commit: no code path counts one itself
  business_failures: { owner: ['drizzle/0046_business_failures.sql'], writers: ['business_failure_count'] },
}

const ROOT = join(import.meta.dirname, '..')

interface SourceFile {
  /** from the repository root, with '/' */
  readonly path: string
  readonly text: string
}

interface TableWrite {
  readonly table: string
  readonly line: number
  /** what was found: the SQL verb, 'drizzle', or the writer function called */
  readonly how: string
}

/** The code without its comments, newlines kept (so a match's line is the file's). */
function code(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ')
  return text.replace(/\/\*[\s\S]*?\*\//g, blank).replace(/(^|[^:])(\/\/.*)$/gm, (_, pre, c) => pre + blank(c))
}

// a table name as SQL may spell it: quoted or not, with or without its schema
const TABLE = String.raw`((?:"?\w+"?\.)?"?\w+"?)`
const SQL_WRITES: ReadonlyArray<readonly [string, RegExp]> = [
  ['insert', new RegExp(String.raw`\binsert\s+into\s+(?:only\s+)?${TABLE}`, 'gi')],
  // `update t [alias] set`: the `set` keeps out "for update", "do update set" and English
  ['update', new RegExp(String.raw`\bupdate\s+(?:only\s+)?${TABLE}(?:\s+(?:as\s+)?\w+)?\s+set\b`, 'gi')],
  ['delete', new RegExp(String.raw`\bdelete\s+from\s+(?:only\s+)?${TABLE}`, 'gi')],
  ['copy', new RegExp(String.raw`\bcopy\s+${TABLE}(?:\s*\([^)]*\))?\s+from\b`, 'gi')],
  ['truncate', new RegExp(String.raw`\btruncate\s+(?:table\s+)?(?:only\s+)?${TABLE}`, 'gi')],
  ['merge', new RegExp(String.raw`\bmerge\s+into\s+(?:only\s+)?${TABLE}`, 'gi')],
]
const KEYWORDS = new Set(['set', 'only', 'table', 'select', 'from', 'into'])

const tableName = (spelled: string) =>
  spelled
    .replace(/"/g, '')
    .replace(/^public\./i, '')
    .toLowerCase()
const camel = (table: string) => table.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

/** Every write of a table in `text` that the scanner recognises; writers of `owners` count as writes of their table. */
function tableWrites(text: string, owners: Readonly<Record<string, TableOwner>> = TABLE_OWNERS): TableWrite[] {
  const src = code(text)
  const found: TableWrite[] = []
  for (const [how, pattern] of SQL_WRITES)
    for (const m of src.matchAll(pattern)) {
      const table = tableName(m[1] as string)
      if (!KEYWORDS.has(table)) found.push({ table, how, line: lineAt(src, m.index ?? 0) })
    }
  for (const [table, entry] of Object.entries(owners)) {
    // drizzle: db.insert(withdrawals), tx.update(schema.platformStops), …
    const orm = new RegExp(String.raw`\.(?:insert|update|delete)\(\s*(?:schema\.)?${camel(table)}\s*\)`, 'g')
    for (const m of src.matchAll(orm)) found.push({ table, how: 'drizzle', line: lineAt(src, m.index ?? 0) })
    for (const writer of entry.writers ?? [])
      for (const m of src.matchAll(new RegExp(String.raw`\b${writer}\s*\(`, 'g')))
        found.push({ table, how: `${writer}()`, line: lineAt(src, m.index ?? 0) })
  }
  return found
}

const within = (path: string, places: readonly string[]) =>
  places.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p))

/** "path:line: table written by how" for each write of an owned table outside its owner (and delegates). */
function ownershipOffenders(
  files: readonly SourceFile[],
  owners: Readonly<Record<string, TableOwner>> = TABLE_OWNERS,
): string[] {
  const offenders: string[] = []
  for (const file of files)
    for (const w of tableWrites(file.text, owners)) {
      const entry = owners[w.table]
      if (!entry || within(file.path, [...entry.owner, ...Object.keys(entry.delegates ?? {})])) continue
      offenders.push(`${file.path}:${w.line}: ${w.table} written (${w.how}) outside ${entry.owner.join(', ')}`)
    }
  return offenders
}

function walk(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'test' || name === 'fixtures' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...walk(p))
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !/\.(test|spec)\.\w+$/.test(name)) out.push(p)
  }
  return out
}

/** The service's source: apps/*\/src and packages/*\/src, without tests; packages/testkit is test support. */
function serviceSources(): SourceFile[] {
  return ['apps', 'packages'].flatMap((top) =>
    readdirSync(join(ROOT, top))
      .filter((name) => !(top === 'packages' && name === 'testkit'))
      .flatMap((name) => {
        const src = join(ROOT, top, name, 'src')
        try {
          statSync(src)
        } catch {
          return []
        }
        return walk(src).map((f) => ({ path: relative(ROOT, f).split('\\').join('/'), text: readFileSync(f, 'utf8') }))
      }),
  )
}

/** The migrations, for the tables only triggers write (their owner is the migration that defines them). */
function migrations(): SourceFile[] {
  return readdirSync(join(ROOT, 'drizzle'))
    .filter((name) => name.endsWith('.sql'))
    .map((name) => ({ path: `drizzle/${name}`, text: readFileSync(join(ROOT, 'drizzle', name), 'utf8') }))
}

describe('table owners (docs/architecture.md "Table owners")', () => {
  const sources = serviceSources()

  it('every write of an owned table is in its owner’s files', () => {
    expect(ownershipOffenders(sources)).toEqual([])
  })

  it('each owner exists and writes its table (the map does not outlive a move)', () => {
    const all = [...sources, ...migrations()]
    for (const [table, entry] of Object.entries(TABLE_OWNERS)) {
      const own = all.filter((s) => within(s.path, entry.owner))
      expect(own.length, `${table}: no source under ${entry.owner.join(', ')}`).toBeGreaterThan(0)
      const writes = [...own, ...sources.filter((s) => within(s.path, Object.keys(entry.delegates ?? {})))].flatMap(
        (s) => tableWrites(s.text).filter((w) => w.table === table),
      )
      expect(writes.length, `${table}: its owner writes it nowhere`).toBeGreaterThan(0)
    }
  })

  it('every table the migrations create has an owner in the map', () => {
    const created = migrations().flatMap((m) =>
      [...m.text.matchAll(/\bcreate\s+table\s+(?:if\s+not\s+exists\s+)?((?:"?\w+"?\.)?"?\w+"?)/gi)].map((c) =>
        tableName(c[1] as string),
      ),
    )
    expect(created.length).toBeGreaterThan(30)
    expect(created.filter((t) => !(t in TABLE_OWNERS))).toEqual([])
  })

  it('the scanner finds a write in every spelling, and not a read, a lock or a comment', () => {
    const writes = (text: string) => tableWrites(text).map((w) => `${w.table} ${w.how}`)
    expect(writes("await tx`update withdrawals set state = 'sent' where id = $1`")).toEqual(['withdrawals update'])
    expect(writes('await sql`\n  UPDATE  "public"."withdrawals" AS w\n  SET state = 1`')).toEqual([
      'withdrawals update',
    ])
    expect(writes("await sql.unsafe('insert into withdrawals (id) values ($1)', [id])")).toEqual(['withdrawals insert'])
    expect(writes('sql`delete from only platform_stops where true`')).toEqual(['platform_stops delete'])
    expect(writes('sql`copy liability_tree_leaves (root_id, idx) from stdin`')).toEqual(['liability_tree_leaves copy'])
    expect(writes('sql`truncate table operator_actions`')).toEqual(['operator_actions truncate'])
    expect(writes('await db.update(schema.platformStops).set({ clearedAt })')).toEqual(['platform_stops drizzle'])
    expect(writes('await reserveWithdrawal(tx, { userId, currency, amount })')).toEqual([
      'withdrawals reserveWithdrawal()',
    ])
    expect(writes('sql`select * from ledger_reserve_withdrawal($1, $2)`')).toEqual([
      'withdrawals ledger_reserve_withdrawal()',
    ])
    // an upsert is one write, its `do update set` no second one
    expect(
      writes('sql`insert into platform_wallets (address) values ($1) on conflict (address) do update set role = $2`'),
    ).toEqual(['platform_wallets insert'])
    for (const read of [
      'sql`select id from withdrawals where id = $1 for update skip locked`',
      '// update withdrawals set state = failed\nconst a = 1',
      '/* insert into withdrawals */ seen.delete(withdrawalId)',
      "log.info('withdrawals: update set by the operator')",
    ])
      expect(writes(read), read).toEqual([])
  })

  it('fails when a route writes withdrawals itself', () => {
    const route: SourceFile = {
      path: 'apps/api/src/routes/withdrawals/index.ts',
      text: [
        "import { requestWithdrawal } from '@wh/withdrawals'",
        'export async function cancel(sql, id) {',
        "  await sql`update withdrawals set state = 'failed' where id = $1`",
        '}',
      ].join('\n'),
    }
    expect(ownershipOffenders([route])).toEqual([
      'apps/api/src/routes/withdrawals/index.ts:3: withdrawals written (update) outside packages/withdrawals/src/',
    ])
    // the same line in the owner is its own business
    expect(ownershipOffenders([{ ...route, path: 'packages/withdrawals/src/transitions.ts' }])).toEqual([])
  })
})
