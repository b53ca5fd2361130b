/**
 * Regenerates src/v3/wire.gen.ts from the kept v3 OpenAPI document:
 *   pnpm --filter @wh/exchange exec tsx scripts/gen-v3-types.ts
 * test/v3-wire-gen.test.ts fails when the committed file differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { generateWireTypes, type OpenApiDoc } from '../src/v3/codegen'

const root = new URL('..', import.meta.url)
const doc = JSON.parse(readFileSync(new URL('test/spec/v3/openapi.json', root), 'utf8')) as OpenApiDoc
const out = fileURLToPath(new URL('src/v3/wire.gen.ts', root))
writeFileSync(out, generateWireTypes(doc))
console.log(`wrote ${out}`)
