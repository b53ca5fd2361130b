/**
 * src/v3/wire.gen.ts is what scripts/gen-v3-types.ts writes from the kept v3 OpenAPI document:
 * regenerated here in memory and compared byte for byte, so the committed types cannot drift
 * from the spec or from the generator (docs/exchange-v3.md "What the client does on v3").
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { generateWireTypes, methodSchemas, type OpenApiDoc, V3_METHODS } from '../src/v3/codegen'

const read = (rel: string) => readFileSync(new URL(rel, import.meta.url), 'utf8')
const doc = JSON.parse(read('./spec/v3/openapi.json')) as OpenApiDoc

describe('v3 wire types', () => {
  it('the committed wire.gen.ts equals a fresh generation from openapi.json', () => {
    expect(read('../src/v3/wire.gen.ts')).toBe(generateWireTypes(doc))
  })

  it('every method the client uses is in the spec with a request and a result schema', () => {
    for (const m of V3_METHODS) expect(() => methodSchemas(doc, m)).not.toThrow()
  })

  it('renders required and optional fields, enums and nullable unions as the schema says', () => {
    const out = generateWireTypes(doc, ['private/order'])
    expect(out).toContain("export type Direction = 'buy' | 'sell'")
    expect(out).toMatch(/export interface CreateOrderRequest \{[^}]*\n {2}nonce: string\n/)
    expect(out).toMatch(/\n {2}label\?: string \| null\n/)
    expect(out).toContain("'private/order': { params: CreateOrderRequest; result: OrderCreatedResponse }")
    expect(() => generateWireTypes(doc, ['private/create_subaccount'])).toThrow(/not in the v3 OpenAPI document/)
  })
})
