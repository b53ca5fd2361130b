/**
 * spec 2.4: the ONLY module that builds or reads a ledger account name. Every other file asks
 * these functions; an architecture test (test/architecture.test.ts) fails on a name literal
 * anywhere else, so a typo cannot open a new account.
 */
import { AppError } from '@wh/core'

declare const accountBrand: unique symbol
/** An account name built by this module. */
export type AccountName = string & { readonly [accountBrand]: true }

export const INCOME_KINDS = ['premium', 'interest', 'funding'] as const
export type IncomeKind = (typeof INCOME_KINDS)[number]
export const EXPENSE_KINDS = ['exchange_fee', 'settlement', 'swap', 'borrow'] as const
export type ExpenseKind = (typeof EXPENSE_KINDS)[number]

/** Who bears a cost: read from the prefix, `platform:` or the user (spec 2.4). */
export type Bearer = 'platform' | 'user'

/** The account families a user has, for per-user totals. */
export type UserAccountFamily = 'sub' | 'transit' | 'external' | 'income' | 'expense'

const USER = 'user'
const PLATFORM = 'platform'

// Parts never contain ':' so a name splits back into its parts unambiguously.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const SUBACCOUNT = /^[A-Za-z0-9_-]{1,64}$/
const CURRENCY = /^[A-Za-z0-9][A-Za-z0-9.]{0,19}$/
const CHAIN = /^[a-z][a-z0-9-]{0,31}$/

export class InvalidAccountError extends AppError {
  constructor(message: string, details: Record<string, unknown>) {
    super({ code: 'INVALID_LEDGER_ACCOUNT', statusCode: 500, message, details })
  }
}

function part(value: string, re: RegExp, what: string): string {
  if (!re.test(value)) throw new InvalidAccountError(`invalid ${what} in an account name`, { [what]: value })
  return value
}
const name = (...parts: string[]) => parts.join(':') as AccountName

/** `user:{u}:sub:{subaccountId}:{currency}`: held at the exchange, keyed by subaccount id. */
export function userSub(userId: string, subaccountId: string, currency: string): AccountName {
  return name(
    USER,
    part(userId, UUID, 'userId'),
    'sub',
    part(subaccountId, SUBACCOUNT, 'subaccountId'),
    part(currency, CURRENCY, 'currency'),
  )
}
/** `user:{u}:transit`: the single basis of the free balance. */
export function userTransit(userId: string): AccountName {
  return name(USER, part(userId, UUID, 'userId'), 'transit')
}
/** `user:{u}:external`: the mirror of the system boundary (negative = net deposited). */
export function userExternal(userId: string): AccountName {
  return name(USER, part(userId, UUID, 'userId'), 'external')
}
export function userIncome(userId: string, kind: IncomeKind): AccountName {
  return name(USER, part(userId, UUID, 'userId'), 'income', oneOf(kind, INCOME_KINDS, 'income kind'))
}
export function userExpense(userId: string, kind: ExpenseKind): AccountName {
  return name(USER, part(userId, UUID, 'userId'), 'expense', oneOf(kind, EXPENSE_KINDS, 'expense kind'))
}
export function platformGas(chain: string): AccountName {
  return name(PLATFORM, 'gas', part(chain, CHAIN, 'chain'))
}
/** The exchange's chain in the journal: platformHot(EXCHANGE_CHAIN) holds the platform's own funds at the exchange. */
export const EXCHANGE_CHAIN = 'derive'
export function platformHot(chain: string): AccountName {
  return name(PLATFORM, 'hot', part(chain, CHAIN, 'chain'))
}
/** Gas attributed to a user but not charged to them. */
export function platformExpenseGas(chain: string): AccountName {
  return name(PLATFORM, 'expense', 'gas', part(chain, CHAIN, 'chain'))
}
export const PLATFORM_EXPENSE_OVERHEAD = name(PLATFORM, 'expense', 'overhead')
export const PLATFORM_FEE_REVENUE = name(PLATFORM, 'fee_revenue')
/** The unexplained difference between the journal and the exchange. */
export const PLATFORM_EXPENSE_RECONCILIATION = name(PLATFORM, 'expense', 'reconciliation')

function oneOf<T extends string>(value: T, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value)) throw new InvalidAccountError(`invalid ${what}`, { [what]: value })
  return value
}

/** The structure of a name, for readers (summaries, statements, reconciliation). */
export type ParsedAccount =
  | { bearer: 'user'; userId: string; family: 'sub'; subaccountId: string; currency: string }
  | { bearer: 'user'; userId: string; family: 'transit' | 'external' }
  | { bearer: 'user'; userId: string; family: 'income'; kind: IncomeKind }
  | { bearer: 'user'; userId: string; family: 'expense'; kind: ExpenseKind }
  | { bearer: 'platform'; family: 'gas' | 'hot' | 'expense_gas'; chain: string }
  | { bearer: 'platform'; family: 'expense_overhead' | 'fee_revenue' | 'expense_reconciliation' }

/** Parses a name back into its parts, or undefined when it is not one of the shapes of spec 2.4. */
export function parseAccount(account: string): ParsedAccount | undefined {
  const p = account.split(':')
  if (p[0] === USER && p[1] !== undefined && UUID.test(p[1])) {
    const userId = p[1]
    if (p[2] === 'sub' && p.length === 5 && SUBACCOUNT.test(p[3]!) && CURRENCY.test(p[4]!))
      return { bearer: 'user', userId, family: 'sub', subaccountId: p[3]!, currency: p[4]! }
    if (p.length === 3 && (p[2] === 'transit' || p[2] === 'external')) return { bearer: 'user', userId, family: p[2] }
    if (p.length === 4 && p[2] === 'income' && (INCOME_KINDS as readonly string[]).includes(p[3]!))
      return { bearer: 'user', userId, family: 'income', kind: p[3] as IncomeKind }
    if (p.length === 4 && p[2] === 'expense' && (EXPENSE_KINDS as readonly string[]).includes(p[3]!))
      return { bearer: 'user', userId, family: 'expense', kind: p[3] as ExpenseKind }
    return undefined
  }
  if (p[0] !== PLATFORM) return undefined
  if (p.length === 3 && (p[1] === 'gas' || p[1] === 'hot') && CHAIN.test(p[2]!))
    return { bearer: 'platform', family: p[1], chain: p[2]! }
  if (p.length === 4 && p[1] === 'expense' && p[2] === 'gas' && CHAIN.test(p[3]!))
    return { bearer: 'platform', family: 'expense_gas', chain: p[3]! }
  if (account === PLATFORM_EXPENSE_OVERHEAD) return { bearer: 'platform', family: 'expense_overhead' }
  if (account === PLATFORM_FEE_REVENUE) return { bearer: 'platform', family: 'fee_revenue' }
  if (account === PLATFORM_EXPENSE_RECONCILIATION) return { bearer: 'platform', family: 'expense_reconciliation' }
  return undefined
}

/** Narrows a string that came back from the database or a payload into an AccountName. */
export function asAccountName(account: string): AccountName {
  if (!parseAccount(account)) throw new InvalidAccountError('not a ledger account name', { account })
  return account as AccountName
}

/** spec 2.4: `platform:` means the platform bears it, anything else the user. */
export function bearerOf(account: string): Bearer {
  return account.startsWith(`${PLATFORM}:`) ? 'platform' : 'user'
}

export function isPlatformAccount(account: string): boolean {
  return bearerOf(account) === 'platform'
}

/** The owner of a `user:` account, or null for a `platform:` one (or a string that is no account). */
export function ownerOf(account: string): string | null {
  // hot path of the append: every user name is `user:` + a 36-character uuid + `:`
  if (!account.startsWith(`${USER}:`) || account.charCodeAt(41) !== 58) return null
  const userId = account.slice(5, 41)
  return UUID.test(userId) ? userId : null
}

/**
 * SQL `LIKE` patterns that together match every user's holdings, `user:{u}:transit` and
 * `user:{u}:sub:{sub}:{currency}`: what the platform owes its users (proof of liabilities). A
 * reader still parses each name it gets back (`isUserHolding`): the patterns only narrow the scan.
 */
export const USER_HOLDING_PATTERNS: readonly string[] = [name(USER, '%', 'transit'), name(USER, '%', 'sub', '%')]

/** A user's holding (transit or a subaccount's currency): part of what the platform owes them. */
export function isUserHolding(
  parsed: ParsedAccount | undefined,
): parsed is Extract<ParsedAccount, { family: 'transit' | 'sub' }> {
  return parsed?.bearer === 'user' && (parsed.family === 'transit' || parsed.family === 'sub')
}

/** The prefix every account of one user starts with (for `starts_with` in SQL). */
export function userAccountPrefix(userId: string): string {
  return `${USER}:${part(userId, UUID, 'userId')}:`
}

const INCOME_LABELS: Readonly<Record<IncomeKind, string>> = {
  premium: 'Income: option premium',
  interest: 'Income: interest',
  funding: 'Income: funding',
}
const EXPENSE_LABELS: Readonly<Record<ExpenseKind, string>> = {
  exchange_fee: 'Cost: exchange fees',
  settlement: 'Cost: settlement at expiry',
  swap: 'Cost: swaps',
  borrow: 'Cost: borrowing',
}

/**
 * An account as its owner reads it on a statement, without ids: `user:{u}:transit` is "Platform
 * balance" (the free balance plus what waits to be withdrawn or to fund a position),
 * `user:{u}:sub:{S}:{C}` "Exchange subaccount S (C)", `user:{u}:external` "Outside the platform".
 * A string that is no account name comes back as it is.
 *
 * @example accountLabel(userIncome(u, 'premium')) // 'Income: option premium'
 */
export function accountLabel(account: string): string {
  const a = parseAccount(account)
  if (!a) return account
  switch (a.family) {
    case 'transit':
      return 'Platform balance'
    case 'external':
      return 'Outside the platform'
    case 'sub':
      return `Exchange subaccount ${a.subaccountId} (${a.currency})`
    case 'income':
      return INCOME_LABELS[a.kind]
    case 'expense':
      return EXPENSE_LABELS[a.kind]
    case 'gas':
      return `Platform gas (${a.chain})`
    case 'hot':
      return `Platform hot wallet (${a.chain})`
    case 'expense_gas':
      return `Platform cost: gas (${a.chain})`
    case 'expense_overhead':
      return 'Platform cost: overhead'
    case 'fee_revenue':
      return 'Platform fee revenue'
    case 'expense_reconciliation':
      return 'Platform cost: reconciliation'
  }
}
