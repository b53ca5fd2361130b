import { AppError } from '@wh/core'
import { describe, expect, it } from 'vitest'
import { isDependencyUnavailable } from './dependency-errors'
import { toErrorBody } from './errors'

const withCode = (message: string, code: string, name = 'Error') => Object.assign(new Error(message), { code, name })

describe('dependency errors answer 503 SERVICE_UNAVAILABLE in the one error shape', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['postgres.js: the connection closed', withCode('write CONNECTION_CLOSED 127.0.0.1:5432', 'CONNECTION_CLOSED')],
    [
      'Postgres shutting down (57P01)',
      withCode('terminating connection due to administrator command', '57P01', 'PostgresError'),
    ],
    ['Postgres starting up (57P03)', withCode('the database system is starting up', '57P03', 'PostgresError')],
    ['a connection exception (08006)', withCode('connection failure', '08006', 'PostgresError')],
    ['ioredis without its offline queue', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['ioredis: the connection closed', new Error('Connection is closed.')],
    ['Redis replaying its append-only file', new Error('LOADING Redis is loading the dataset in memory')],
    [
      'a cause two levels down',
      new Error('outer', { cause: new Error('inner', { cause: withCode('x', 'ECONNRESET') }) }),
    ],
  ])('%s', (_what, err) => {
    expect(isDependencyUnavailable(err)).toBe(true)
    expect(toErrorBody(err)).toEqual({
      statusCode: 503,
      code: 'SERVICE_UNAVAILABLE',
      error: 'Service Unavailable',
      message: 'A dependency is unavailable, try again shortly',
    })
  })

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a query error (unique violation)', withCode('duplicate key value', '23505', 'PostgresError')],
    ['an 08 code from something that is not Postgres', withCode('x', '08001')],
    ['a string', 'ECONNREFUSED'],
  ])('not %s: that stays a 500', (_what, err) => {
    expect(isDependencyUnavailable(err)).toBe(false)
    expect(toErrorBody(err).statusCode).toBe(500)
  })

  it('an AppError keeps its own status and code, whatever its cause', () => {
    const err = new AppError({
      code: 'SOMETHING',
      statusCode: 422,
      message: 'no',
      cause: withCode('x', 'ECONNREFUSED'),
    })
    expect(toErrorBody(err)).toMatchObject({ statusCode: 422, code: 'SOMETHING' })
  })
})
