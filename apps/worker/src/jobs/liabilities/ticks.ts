/**
 * The proof of liabilities' tick (queue `accounting`, hourly; docs/solvency.md "Proof of
 * liabilities"): @wh/proof's daily publication (`runLiabilitiesPublishTick`); here only its name and period.
 */
import {
  LIABILITIES_PUBLISH_EVERY_MS,
  LIABILITIES_PUBLISH_TICK,
  runLiabilitiesPublishTick,
} from '@wh/proof/publish-run'
import type { TickDefinition } from '../../ticks'

export const liabilitiesPublishTick: TickDefinition = {
  name: LIABILITIES_PUBLISH_TICK,
  queue: 'accounting',
  everyMs: LIABILITIES_PUBLISH_EVERY_MS,
  process: (_job, ctx) => runLiabilitiesPublishTick(ctx.deps, ctx.log),
}
