/** The one error shape of the API (DESIGN "Conventions"): { statusCode, code, error, message }. */
import Type from 'typebox'

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.String(),
    error: Type.String(),
    message: Type.String(),
  },
  { $id: 'ErrorBody', description: 'The one error shape of this API' },
)
