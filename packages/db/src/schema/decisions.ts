import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

/**
 * The wheel's decision log (docs/trading.md "Why: the decision log"; migration 0020): one row per
 * decision of a wheel (a leg opened, the expiry and strike chosen with the candidates considered, a
 * wait, a skip, a conversion). Appended only, by @wh/trading's decisions.ts; the application may
 * insert and read it, never change or delete it. `seq` orders a wheel's rows and is the cursor.
 */
export const wheelDecisions = pgTable(
  'wheel_decisions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    seq: bigint('seq', { mode: 'bigint' }).generatedAlwaysAsIdentity().notNull(),
    wheelId: uuid('wheel_id').notNull(),
    userId: uuid('user_id').notNull(),
    /** the leg the decision is about, when there is one */
    positionId: uuid('position_id'),
    /** 'leg_opened' | 'expiry_chosen' | 'strike_chosen' | 'skipped' | 'waiting' | 'conversion' | 'stopped' | 'resumed' */
    kind: text('kind').notNull(),
    /** a reason code of @wh/trading's DECISION_REASONS */
    reason: text('reason').notNull(),
    /** the candidates considered and the one chosen (DecisionFacts) */
    facts: jsonb('facts').notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('wheel_decisions_seq_key').on(t.seq), index('wheel_decisions_wheel_idx').on(t.wheelId, t.seq)],
)

export type WheelDecisionRow = typeof wheelDecisions.$inferSelect
