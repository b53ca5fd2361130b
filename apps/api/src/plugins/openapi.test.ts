import { describe, expect, it } from 'vitest'
import { enumsAsEnums, namedSchemas, type OpenApiDoc } from './openapi'

const doc = (paths: unknown): OpenApiDoc => ({ paths, components: { schemas: {} } }) as OpenApiDoc

describe('the document transforms', () => {
  it('turns an anyOf of one-value strings into one enum, and leaves other unions alone', () => {
    const schema = {
      anyOf: [
        { type: 'string', const: 'a' },
        { type: 'string', enum: ['b'] },
      ],
      description: 'd',
    }
    const mixed = { anyOf: [{ type: 'string', const: 'a' }, { type: 'null' }] }
    const objects = {
      anyOf: [
        { type: 'object', properties: { k: { const: 'a' } } },
        { type: 'string', const: 'b' },
      ],
    }
    enumsAsEnums([schema, mixed, objects])
    expect(schema).toEqual({ type: 'string', enum: ['a', 'b'], description: 'd' })
    expect(mixed.anyOf).toHaveLength(2)
    expect(objects.anyOf).toHaveLength(2)
  })

  it('moves titled schemas to components, once, and refuses two different schemas under one name', () => {
    const thing = { type: 'object', title: 'Thing', properties: { id: { type: 'string' } } }
    const d = doc({ '/a': { get: { responses: { 200: { schema: { type: 'array', items: thing } } } } }, '/b': thing })
    namedSchemas(d)
    expect(d.paths).toEqual({
      '/a': {
        get: { responses: { 200: { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } } },
      },
      '/b': { $ref: '#/components/schemas/Thing' },
    })
    expect((d.components as { schemas: unknown }).schemas).toEqual({ Thing: thing })
    const other = { type: 'object', title: 'Thing', properties: { id: { type: 'integer' } } }
    expect(() => namedSchemas(doc({ '/a': thing, '/b': other }))).toThrow('two different schemas are named Thing')
  })
})
