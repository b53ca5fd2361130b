/** Query and response schemas of GET /portfolio/summary and GET /portfolio/statement. */

import { STATEMENT_DEFAULT_LIMIT, STATEMENT_MAX_LIMIT } from '@wh/ledger'
import Type from 'typebox'
import { LiteralUnion } from './literals'
import { SubaccountSummary } from './subaccounts'

/** A summary period may span at most this many days. */
export const SUMMARY_MAX_SPAN_DAYS = 366
/** The summary period when the caller gives none: the last 30 days ending now. */
export const SUMMARY_DEFAULT_SPAN_DAYS = 30

const DateTime = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description })

const Amount = (description: string) =>
  Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', description: `${description}; decimal string in the currency's unit` })

export const SummaryQuery = Type.Object(
  {
    from: Type.Optional(DateTime('start of the period, inclusive (ISO-8601); default: `to` minus 30 days')),
    to: Type.Optional(DateTime('end of the period, exclusive (ISO-8601); default: now')),
  },
  { additionalProperties: false },
)
export type SummaryQueryValue = Type.Static<typeof SummaryQuery>

const AssetSummary = Type.Object(
  {
    currency: Type.String(),
    decimals: Type.Integer({ description: 'places of every amount of this asset' }),
    freeBalance: Amount(
      'transit minus pending withdrawals and fundings in flight: what may be withdrawn or put to work now',
    ),
    inSubaccounts: Amount('held at the exchange, all subaccounts together'),
    pendingWithdrawals: Amount("withdrawals in state 'requested'"),
    pendingFundings: Amount('fundings of a subaccount sent to the exchange but not yet confirmed'),
    income: Type.Object(
      {
        premium: Amount('option premium received over the period'),
        interest: Amount('interest earned over the period'),
        funding: Amount('funding over the period, negative when paid'),
      },
      { description: 'over the period, positive = earned' },
    ),
    expenses: Type.Object(
      {
        exchangeFee: Amount('exchange fees over the period'),
        settlement: Amount('settlements of options expired in the money over the period'),
        swap: Amount('sold in swaps (negative: bought) over the period'),
        borrow: Amount('interest charged over the period'),
      },
      { description: 'over the period, positive = paid' },
    ),
    netDeposits: Amount('deposits minus withdrawals sent over the period'),
    periodReturn: Amount(
      'change of holdings over the period minus net deposits: income less expenses and fees, losses included',
    ),
  },
  { title: 'AssetSummary' },
)

export const SummaryResponse = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  assets: Type.Array(AssetSummary, { description: 'one entry per currency the user holds or moved, by currency' }),
  subaccounts: Type.Array(SubaccountSummary, {
    description: "the user's subaccounts at the exchange, by asset: exchange id, state and journal balances now",
  }),
})

export const StatementQuery = Type.Object(
  {
    from: Type.Optional(DateTime('only events at or after this time (ISO-8601)')),
    to: Type.Optional(DateTime('only events before this time (ISO-8601)')),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: '`nextCursor` of the previous page, as given' }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: STATEMENT_MAX_LIMIT,
        default: STATEMENT_DEFAULT_LIMIT,
        description: 'events per page',
      }),
    ),
    format: Type.Optional(
      LiteralUnion(['json', 'csv'], {
        default: 'json',
        description: 'csv: text/csv, one line per posting, the next cursor in the x-next-cursor header',
      }),
    ),
  },
  { additionalProperties: false },
)
export type StatementQueryValue = Type.Static<typeof StatementQuery>

const StatementPosting = Type.Object(
  {
    account: Type.String({ description: 'ledger account name (spec 2.4)' }),
    label: Type.String({
      description: 'the account as a person reads it, without ids: "Platform balance", "Income: option premium", …',
    }),
    currency: Type.String(),
    amount: Amount('signed: positive flowed into the account'),
    balanceAfter: Amount("the account's running balance in this currency after the event"),
  },
  { title: 'StatementPosting' },
)

const StatementRow = Type.Object(
  {
    eventId: Type.String({ format: 'uuid' }),
    type: Type.String({ description: 'event type (spec 6)' }),
    occurredAt: Type.String({ format: 'date-time' }),
    recordedAt: Type.String({ format: 'date-time' }),
    postings: Type.Array(StatementPosting, { description: "postings to the user's own accounts" }),
  },
  { title: 'StatementLine' },
)

export const StatementResponse = Type.Object({
  rows: Type.Array(StatementRow, { description: 'in time order (occurredAt, then eventId)' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'pass as `cursor` for the next page; null on the last',
  }),
})

export const StatementCsv = Type.String({
  description:
    'header line event_id,type,occurred_at,account,currency,amount,balance_after,account_label, then one line per posting',
})
