import { rowJobProcessors } from '../items/index'
import type { TickDefinition } from '../ticks'
import { depositAuditTicks, depositScanTicks, depositSweepProcessor, depositSweepTick } from './deposits/ticks'
import { accrualsTick, feeTick, fundTick, reconcileTick, releaseTick, sessionKeysTick } from './exchange/ticks'
import { liabilitiesPublishTick } from './liabilities/ticks'
import { solvencyTick } from './solvency/ticks'
import { convertTick, placeTick, wheelTick } from './trading/ticks'
import { bridgeTicks, cctpRefillTicks, hotWalletEthTick, treasuryTick } from './treasury/ticks'
import { withdrawalSendTick } from './withdrawals/ticks'

/**
 * Every tick of the service, one processor per file under jobs/<area>/. The on-chain,
 * exchange and trading issues add theirs (deposits/ticks.ts, withdrawals/ticks.ts, …).
 */
export const ticks: readonly TickDefinition[] = [
  // one watch per chain (every 5 s), the sweep fan-out (every 10 s) and its per-deposit processor
  ...depositScanTicks,
  depositSweepTick,
  depositSweepProcessor,
  // one balance audit per chain: ETH at deposit addresses that no deposit explains (every 30 s)
  ...depositAuditTicks,
  // requested withdrawals sent through the outbox (every 15 s)
  withdrawalSendTick,
  // one bridge per chain: the hot wallet's surplus to the exchange chain (every 60 s): Ethereum's by the L1
  // deposit, each L2's to L1 over CCTP first (docs/chains.md "The L2 route")
  ...bridgeTicks,
  // each L2 hot wallet refilled from L1 over CCTP when short of its target (every 30 s), and every hot wallet's
  // ETH watched (every 5 min): ETH stays per chain
  ...cctpRefillTicks,
  hotWalletEthTick,
  // v3: the Ethereum hot wallet refilled from the funding subaccount when withdrawals would drain it (every 60 s)
  treasuryTick,
  // subaccount funding (every 5 s) and releases (every 10 s), both under the exchange cycle lock
  fundTick,
  releaseTick,
  // the platform's fees withdrawn from the users' subaccounts (every 10 min, under the cycle lock)
  feeTick,
  // accruals (every 15 min) and reconciliation (every 5 min), queue accounting, under the cycle lock
  accrualsTick,
  reconcileTick,
  // the session keys read back from the exchange: an alert days before one expires, or when one
  // holds more than its duty (hourly, queue accounting; docs/operations.md "Exchange session keys")
  sessionKeysTick,
  // the proof of liabilities: checked hourly, published once per UTC day (queue accounting)
  liabilitiesPublishTick,
  // positions one step further: funding done, instrument chosen, orders placed and repriced,
  // fills and settlements recorded (every 10 s, under the cycle lock)
  placeTick,
  // the wheel runner: each running wheel's next leg (every RETRY_MS, only when WHEEL_ENABLED)
  wheelTick,
  // conversion rounds after in-the-money wheel legs (every CONVERSION_FAST_TICK_SECONDS, under the cycle lock)
  convertTick,
  // assets against liabilities per currency, every leg stored; a confirmed deficit alerts and may
  // stop the platform (every SOLVENCY_EVERY_SECONDS, queue solvency)
  solvencyTick,
  // the jobs the API adds for each 202 after its commit (no schedule: the ticks above sweep their rows)
  ...rowJobProcessors,
]
