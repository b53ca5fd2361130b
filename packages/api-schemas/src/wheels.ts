/** TypeBox schemas of the wheels controller (docs/trading.md "Wheel settings"). */
import { AT_EXPIRY, STRIKE_BY } from '@wh/trading'
import Type from 'typebox'
import { LiteralUnion } from './literals'

const Bps = (description: string) => Type.Integer({ minimum: 1, maximum: 10_000, description })
const Hours = Type.Integer({ minimum: 1, maximum: 24 * 90, description: 'the nearest expiry at least this far away…' })
const Days = Type.Integer({ minimum: 1, maximum: 90, description: '…and none further than this' })
const StrikeBy = LiteralUnion(STRIKE_BY, {
  description: 'delta: the strike whose |delta| is nearest the target; otm: the strike nearest `otmBps` from the index',
})
const AtExpiry = LiteralUnion(AT_EXPIRY, {
  description:
    'roll: after an expiry the runner opens the next leg from what the subaccount holds (the same side when ' +
    'the leg expired out of the money); settle: the wheel stops once the leg has settled (and converted)',
})
const delta = (side: string) => Bps(`target |delta| of the ${side}, basis points (2000 = 0.20)`)
const otm = Bps("the strike's distance from the index, basis points of the index (strikeBy otm)")

/** A wheel's settings in effect: its own figures, else the active profile's. */
export const WheelSettings = Type.Object(
  {
    strikeBy: StrikeBy,
    putTargetDeltaBps: delta('put'),
    callTargetDeltaBps: delta('call'),
    otmBps: otm,
    minTenorHours: Hours,
    maxTenorDays: Days,
    atExpiry: AtExpiry,
  },
  { title: 'WheelSettings' },
)

/**
 * Optional, and null allowed: written as a type list, not an `anyOf` with null, because the API's
 * validator coerces types and would turn an invalid 0 into the null branch instead of refusing it.
 */
const orNull = <T extends Type.TSchema>(t: T) => {
  const { type, enum: values, ...rest } = t as unknown as { type: string; enum?: unknown[] }
  return Type.Optional(
    Type.Unsafe<Type.Static<T> | null>({ ...rest, type: [type, 'null'], ...(values && { enum: [...values, null] }) }),
  )
}

/**
 * Settings to set: a figure (inside the profile's bounds, GET /trading-config, else 422
 * SETTING_OUT_OF_BOUNDS), null for the profile's value, absent for unchanged. A request body, so
 * untitled like the others (inline in the document).
 */
export const WheelSettingsInput = Type.Object(
  {
    strikeBy: orNull(StrikeBy),
    putTargetDeltaBps: orNull(delta('put')),
    callTargetDeltaBps: orNull(delta('call')),
    otmBps: orNull(otm),
    minTenorHours: orNull(Hours),
    maxTenorDays: orNull(Days),
    atExpiry: orNull(AtExpiry),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const WheelParams = Type.Object({ id: Type.String({ format: 'uuid' }) })

const Bound = Type.Object({ min: Type.Integer(), max: Type.Integer() }, { title: 'SettingBound' })

/** The bounds of the active profile (GET /trading-config, `profile.wheelSettingBounds`). */
export const WheelSettingBounds = Type.Object(
  {
    targetDeltaBps: Bound,
    otmBps: Bound,
    minTenorHours: Bound,
    maxTenorDays: Bound,
    defaultOtmBps: Type.Integer({ description: 'the distance a wheel picking by OTM uses when it names none' }),
    otmToleranceBps: Type.Integer({
      description: 'a strike further than this from the OTM target (basis points of the index) is not picked',
    }),
  },
  { title: 'WheelSettingBounds' },
)

/** The settings a wheel's leg was chosen with (written by the placing tick with the instrument). */
export const LegSettings = Type.Object(
  {
    strikeBy: StrikeBy,
    targetDeltaBps: Type.Optional(Type.Integer({ description: 'strikeBy delta: the target |delta| of its side' })),
    otmBps: Type.Optional(Type.Integer({ description: 'strikeBy otm: the distance from the index' })),
    minTenorHours: Type.Integer(),
    maxTenorDays: Type.Integer(),
  },
  { title: 'LegSettings' },
)
