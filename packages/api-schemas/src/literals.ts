import Type from 'typebox'

/** Typed as one literal of the union of the values: works for tuples and plain arrays alike. */
type Literals<T extends readonly string[]> = [Type.TLiteral<T[number]>]

/**
 * `Type.Union` of one `Type.Literal` per value, the same JSON schema (anyOf of consts) as writing
 * `Type.Union(values.map(Type.Literal))`, but typed as the union of the values: over a mapped array TypeBox's
 * `Static` gives `never`, and a client deriving its types from these schemas could not pass a value.
 */
export function LiteralUnion<const T extends readonly string[]>(
  values: T,
  options?: Type.TSchemaOptions,
): Type.TUnion<Literals<T>> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as Type.TUnion<Literals<T>>
}
