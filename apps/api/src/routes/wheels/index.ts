/**
 * Wheels (docs/trading.md "Wheel settings"): change a wheel's settings (from its next leg on) and
 * resume a stopped one. A wheel is started with POST /positions (side `wheel`) and stopped with
 * DELETE /positions/{id}; the list is in GET /positions.
 */
import { WheelItem } from '@wh/api-schemas/positions'
import { WheelParams, WheelSettingsInput } from '@wh/api-schemas/wheels'
import { NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { assertPlatformRunning } from '@wh/ops'
import { resumeWheel, type TradingProfile, updateWheelSettings } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import type { Jobs } from '../../lib/jobs'
import { currentUser, requireAuth } from '../../plugins/auth'
import { wheelItem, wheelOf } from './view'

export interface WheelRoutesOptions {
  sql: Sql
  /** the active TRADING_PROFILE: its values are the defaults, its bounds the limits */
  profile: TradingProfile
  /** the `wheel.next-leg` job a resume adds after its commit (none: the runner's tick alone) */
  jobs?: Jobs
}

export default async function wheelRoutes(app: FastifyInstance, opts: WheelRoutesOptions) {
  requireAuth(app)
  const { sql, profile } = opts
  const answer = async (userId: string, id: string) => {
    const w = await wheelOf(sql, userId, id)
    if (!w) throw new NotFoundError('wheel')
    return wheelItem(w, profile)
  }

  app.patch<{ Params: Type.Static<typeof WheelParams>; Body: Type.Static<typeof WheelSettingsInput> }>(
    '/wheels/:id',
    {
      schema: {
        tags: ['positions'],
        summary: "Change a wheel's settings: strike selection, tenor window, what happens at expiry",
        description:
          'Applies from the next leg: a leg whose instrument is already chosen keeps it. Each figure must lie ' +
          "inside the active profile's bounds (GET /trading-config, `profile.wheelSettingBounds`): 422 " +
          'SETTING_OUT_OF_BOUNDS with `details` { setting, min, max, value } otherwise. null sets a figure back ' +
          "to the profile's. 404 for a wheel that is not the caller's.",
        params: WheelParams,
        body: WheelSettingsInput,
        response: {
          200: WheelItem,
          400: { $ref: 'ErrorBody#' },
          404: { $ref: 'ErrorBody#' },
          422: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      await updateWheelSettings(sql, userId, request.params.id, request.body, profile)
      return answer(userId, request.params.id)
    },
  )

  app.post<{ Params: Type.Static<typeof WheelParams> }>(
    '/wheels/:id/resume',
    {
      schema: {
        tags: ['positions'],
        summary: 'Resume a stopped wheel: the runner opens its next leg from what the subaccount holds',
        description:
          'The wheel becomes running with its settings; its next leg sells what the subaccount holds unclaimed ' +
          '(the underlying as a covered call, else the cash as a put); nothing is taken from the free balance. ' +
          '409 WHEEL_ALREADY_RUNNING when it runs, WHEEL_STOPPING while it stops, ANOTHER_WHEEL_RUNNING when ' +
          'another wheel runs on the asset; 422 SUBACCOUNT_STOPPED while reconciliation stopped the subaccount, ' +
          'NOTHING_TO_WHEEL when it holds nothing unclaimed; 503 PLATFORM_STOPPED while the platform is stopped.',
        params: WheelParams,
        response: {
          200: WheelItem,
          400: { $ref: 'ErrorBody#' },
          404: { $ref: 'ErrorBody#' },
          409: { $ref: 'ErrorBody#' },
          422: { $ref: 'ErrorBody#' },
          503: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      // no wheel starts again while an operator reviews a solvency deficit (docs/solvency.md "The platform stop")
      await assertPlatformRunning(sql, 'resuming a wheel')
      await resumeWheel(sql, userId, request.params.id)
      // committed: the runner opens its next leg now, not at its next period (WHEEL_RETRY_MS)
      await opts.jobs?.afterCommit(request, 'wheel.next-leg', request.params.id, userId)
      return answer(userId, request.params.id)
    },
  )
}
