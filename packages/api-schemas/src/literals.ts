import Type from 'typebox'

/**
 * A string that is one of `values`, emitted as `{ type: 'string', enum: [...] }`: the form tools and
 * generated clients read as an enumeration (an `anyOf` of one-value consts reads as a union of
 * anonymous types), typed as the union of the values.
 */
export function LiteralUnion<const T extends readonly string[]>(values: T, options?: Type.TSchemaOptions) {
  return Type.Enum([...values] as T[number][], { type: 'string', ...options })
}
