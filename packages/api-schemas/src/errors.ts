/** The one error shape of the API (spec 7): { statusCode, code, error, message, details? }. */
import Type from 'typebox'

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.String(),
    error: Type.String(),
    message: Type.String(),
    details: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description:
          'what a client can act on, per code (docs/architecture.md "Errors"): e.g. WITHDRAWAL_BELOW_MINIMUM\'s minAmount, RELEASE_ALREADY_OPEN\'s releaseId',
      }),
    ),
  },
  { $id: 'ErrorBody', description: 'The one error shape of this API' },
)
