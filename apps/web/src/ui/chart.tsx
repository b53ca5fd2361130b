/**
 * A line chart drawn by uPlot (docs/console.md "Stack": small, fast, canvas), loaded on first use so
 * the first page load does not carry it. The numbers are for drawing only: every figure a person
 * reads is shown from the API's decimal strings; the caption says in words what the chart shows.
 */
import { useEffect, useRef } from 'preact/hooks'
import type uPlot from 'uplot'

export interface Series {
  readonly label: string
  readonly values: ReadonlyArray<number | null>
  readonly color: string
  /** a stepped line (a running total that moves at events) */
  readonly stepped?: boolean
}

export interface ChartProps {
  /** x values, unix seconds */
  readonly x: readonly number[]
  readonly series: readonly Series[]
  /** what the chart shows, in words (its accessible name and visible caption) */
  readonly caption: string
  readonly height?: number
  readonly testId?: string
}

export function LineChart({ x, series, caption, height = 220, testId }: ChartProps) {
  const host = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = host.current
    if (!el || x.length < 2) return
    let plot: uPlot | undefined
    let gone = false
    const resize = new ResizeObserver(() => plot?.setSize({ width: el.clientWidth, height }))
    void (async () => {
      const [{ default: UPlot }] = await Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
      if (gone) return
      const paths = UPlot.paths.stepped?.({ align: 1 })
      plot = new UPlot(
        {
          width: el.clientWidth,
          height,
          legend: { show: series.length > 1 },
          cursor: { drag: { x: false, y: false } },
          axes: [{ stroke: '#444' }, { stroke: '#444', size: 64 }],
          series: [
            {},
            ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, ...(s.stepped && paths && { paths }) })),
          ],
        },
        [x as number[], ...series.map((s) => s.values as (number | null)[])],
        el,
      )
      el.dataset.drawn = 'true'
      resize.observe(el)
    })()
    return () => {
      gone = true
      resize.disconnect()
      plot?.destroy()
    }
  }, [x, series, height])
  return (
    <figure class="chart">
      {x.length >= 2 && (
        <div ref={host} role="img" aria-label={caption} style={{ minHeight: `${height}px` }} data-testid={testId} />
      )}
      <figcaption>{x.length < 2 ? `${caption}: not enough points to draw yet.` : caption}</figcaption>
    </figure>
  )
}
