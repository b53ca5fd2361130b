/**
 * The contract check (contract.ts) that every API test runs under catches what it is for: a status,
 * a header or a content type the document does not declare, and a JSON body off the declared schema.
 */
import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { installContract } from './contract'

describe('the contract check', () => {
  it('flags an undeclared status, header and content type and a body off its schema, and passes what matches', async () => {
    const app = Fastify({ logger: false })
    await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } } })
    const Thing = {
      type: 'object',
      required: ['id', 'amount'],
      properties: { id: { type: 'string', format: 'uuid' }, amount: { type: 'string', pattern: '^[0-9]+$' } },
    }
    app.get('/good', { schema: { response: { 200: Thing } } }, async () => ({
      id: '6f1c1f3e-5c43-4f0b-9d6a-2a1f0f7f3c11',
      amount: '5',
    }))
    // a raw string skips the serialiser, as a handler that builds its own JSON would
    app.get('/bad-body', { schema: { response: { 200: Thing } } }, async (_r, reply) =>
      reply.type('application/json').send(JSON.stringify({ id: 'not-a-uuid', amount: '-5' })),
    )
    app.get('/bad-status', { schema: { response: { 200: Thing } } }, async (_r, reply) => reply.code(418 as 200).send())
    app.get('/bad-header', { schema: { response: { 200: Thing } } }, async (_r, reply) =>
      reply.header('x-next-cursor', 'abc').send({ id: '6f1c1f3e-5c43-4f0b-9d6a-2a1f0f7f3c11', amount: '5' }),
    )
    app.get('/bad-type', { schema: { response: { 200: Thing } } }, async (_r, reply) =>
      reply.type('text/csv').send('id,amount\n'),
    )
    const contract = installContract(app)
    await app.ready()
    for (const url of ['/good', '/bad-body', '/bad-status', '/bad-header', '/bad-type'])
      await app.inject({ method: 'GET', url })
    expect(contract.violations).toEqual([
      expect.stringMatching(/^GET \/bad-body 200: body does not match: \/id must match format "uuid"$/),
      'GET /bad-status answered 418, which its document does not declare',
      'GET /bad-header 200 sent the header x-next-cursor, which its document does not declare',
      'GET /bad-type 200 answered text/csv, which its document does not declare',
    ])
    await app.close()
  })
})
