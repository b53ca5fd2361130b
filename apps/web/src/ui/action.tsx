/**
 * A form's or a button's action with its result shown in place: busy while it runs, then the
 * outcome in words under it (an error through errors.ts: never a raw code).
 */
import { useState } from 'preact/hooks'
import { errorText } from '../errors'

export interface Outcome {
  readonly kind: 'ok' | 'error' | 'busy'
  readonly text: string
}

export function useAction(): [Outcome | undefined, (run: () => Promise<string>, busyText?: string) => Promise<void>] {
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined)
  const act = async (run: () => Promise<string>, busyText = 'Working…') => {
    setOutcome({ kind: 'busy', text: busyText })
    try {
      setOutcome({ kind: 'ok', text: await run() })
    } catch (e) {
      setOutcome({ kind: 'error', text: errorText(e) })
    }
  }
  return [outcome, act]
}

/** The outcome under its form: announced to screen readers as it changes. */
export function Result({ outcome, testId }: { outcome: Outcome | undefined; testId?: string }) {
  return (
    <p
      class={`result ${outcome?.kind ?? ''}`}
      role={outcome?.kind === 'error' ? 'alert' : 'status'}
      data-testid={testId}
    >
      {outcome?.text ?? ''}
    </p>
  )
}
