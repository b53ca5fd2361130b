import { sql } from 'drizzle-orm'
import {
  customType,
  index,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' })

/**
 * What operators did, and why (docs/hostile-world.md): resuming a chain halted by a reorg, deciding
 * a held transaction. Append-only; each row names the action, what it acted on, who and why.
 */
export const operatorActions = pgTable(
  'operator_actions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** chain_resumed | outbound_rechecked | outbound_failed | … */
    action: text('action').notNull(),
    /** what it acted on: a chain name, an outbound transaction id, … */
    subject: text('subject').notNull(),
    /** who (the operator's name as they gave it, or the OS user running the command) */
    actor: text('actor').notNull(),
    reason: text('reason').notNull(),
    details: jsonb('details'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('operator_actions_subject_idx').on(t.subject, t.createdAt)],
)

/**
 * The platform-wide stop (docs/solvency.md "The platform stop"): while a row has no `cleared_at`,
 * new positions and withdrawals above a bound are refused. Raised by a solvency deficit (or by an
 * operator), cleared only by an operator; at most one open at a time.
 */
export const platformStops = pgTable(
  'platform_stops',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    raisedAt: timestamp('raised_at', { withTimezone: true }).notNull().defaultNow(),
    /** 'solvency' (a deficit episode) or 'operator' */
    raisedBy: text('raised_by').notNull(),
    reason: text('reason').notNull(),
    details: jsonb('details'),
    clearedAt: timestamp('cleared_at', { withTimezone: true }),
    clearedBy: text('cleared_by'),
    clearReason: text('clear_reason'),
  },
  (t) => [uniqueIndex('platform_stops_open_key').on(t.raisedBy).where(sql`${t.clearedAt} is null`)],
)

/**
 * The people who operate the service (docs/operations.md "Operators and roles"): a name, a role
 * (viewer, operator, approver) and a scrypt hash of their password. Written by the schema owner only
 * (the operators CLI); the application reads it (migration 0027).
 */
export const operators = pgTable('operators', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique('operators_name_key'),
  role: text('role').notNull(),
  /** scrypt$N$r$p$salt$hash; null: signs in through the authenticating proxy only */
  passwordHash: text('password_hash'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  passwordSetAt: timestamp('password_set_at', { withTimezone: true }),
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
})

/** A signed-in operator: the sha256 of the token the desk handed out, until it expires. */
export const operatorSessions = pgTable(
  'operator_sessions',
  {
    tokenHash: bytea('token_hash').primaryKey(),
    operatorId: uuid('operator_id')
      .notNull()
      .references(() => operators.id),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('operator_sessions_expires_idx').on(t.expiresAt)],
)

/** A decision one operator proposed; it takes effect once enough other approvers approved (migration 0028). */
export const operatorProposals = pgTable(
  'operator_proposals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    action: text('action').notNull(),
    subject: text('subject').notNull(),
    params: jsonb('params').notNull().default(sql`'{}'::jsonb`),
    reason: text('reason').notNull(),
    proposedBy: text('proposed_by').notNull(),
    approvalsRequired: smallint('approvals_required').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('operator_proposals_created_idx').on(t.createdAt),
    index('operator_proposals_subject_idx').on(t.subject, t.createdAt),
  ],
)

export const operatorApprovals = pgTable(
  'operator_approvals',
  {
    proposalId: uuid('proposal_id')
      .notNull()
      .references(() => operatorProposals.id),
    approver: text('approver').notNull(),
    approvedAt: timestamp('approved_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'operator_approvals_pkey', columns: [t.proposalId, t.approver] })],
)

/** One outcome per proposal: executed (with its result), refused or withdrawn. */
export const operatorProposalOutcomes = pgTable('operator_proposal_outcomes', {
  proposalId: uuid('proposal_id')
    .primaryKey()
    .references(() => operatorProposals.id),
  outcome: text('outcome').notNull(),
  decidedBy: text('decided_by').notNull(),
  decidedAt: timestamp('decided_at', { withTimezone: true }).notNull().defaultNow(),
  result: jsonb('result'),
})
