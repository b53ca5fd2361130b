/** A bounded map that forgets the least recently used entry (Map keeps insertion order). */
export class Lru<K, V> {
  readonly #max: number
  readonly #map = new Map<K, V>()
  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be a positive integer')
    this.#max = max
  }
  get(key: K): V | undefined {
    const v = this.#map.get(key)
    if (v !== undefined) {
      this.#map.delete(key)
      this.#map.set(key, v)
    }
    return v
  }
  set(key: K, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K)
  }
  get size(): number {
    return this.#map.size
  }
}
