import type { ErrorBody } from './types.js'

/** The API's one error shape (spec 7), from the schema the API answers with. */
export type ApiErrorBody = ErrorBody

/** The API's error shape as a typed error the frontend can branch on by `code` (and `statusCode`). */
export class ApiError extends Error {
  readonly statusCode: number
  readonly code: string
  /** what the client can act on, per code (e.g. WITHDRAWAL_BELOW_MINIMUM's minAmount) */
  readonly details: ApiErrorBody['details']
  constructor(body: ApiErrorBody) {
    super(body.message)
    this.name = 'ApiError'
    this.statusCode = body.statusCode
    this.code = body.code
    this.details = body.details
  }
}

/** The body of a successful answer, or an ApiError built from the error body (or the status). */
export async function readJson<T>(res: Response): Promise<T> {
  const text = await res.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  if (!res.ok) {
    const b = body as Partial<ApiErrorBody> | undefined
    throw new ApiError({
      statusCode: res.status,
      code: typeof b?.code === 'string' ? b.code : 'HTTP_ERROR',
      error: typeof b?.error === 'string' ? b.error : res.statusText,
      message: typeof b?.message === 'string' ? b.message : `HTTP ${res.status}`,
      ...(b?.details && typeof b.details === 'object' && { details: b.details }),
    })
  }
  return body as T
}
