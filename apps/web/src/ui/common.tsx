/** Small pieces the pages share: a card, the "sign in first" card, a loading line, a progress of steps. */
import type { ComponentChildren } from 'preact'
import { address, hasWallet, signedIn } from '../session'

export function Card({
  title,
  children,
  id,
  wide,
}: {
  title?: string
  children: ComponentChildren
  id?: string
  wide?: boolean
}) {
  const headingId = id ? `${id}-title` : undefined
  return (
    <section class={`card${wide ? ' wide' : ''}`} id={id} aria-labelledby={headingId}>
      {title && <h2 id={headingId}>{title}</h2>}
      {children}
    </section>
  )
}

export function SignInFirst({ what }: { what: string }) {
  return (
    <Card title="Sign in to see this" id="sign-in-first">
      <p>
        {what} belongs to your account.{' '}
        {!hasWallet
          ? 'Open this page in a browser with an Ethereum wallet (MetaMask, Rabby, …).'
          : address.value
            ? 'Use “Sign in” at the top: your wallet signs a message, no transaction, no fee.'
            : 'Use “Connect wallet” at the top, then “Sign in”: your wallet signs a message, no transaction, no fee.'}
      </p>
    </Card>
  )
}

/** Renders `children` when signed in, else the card asking to sign in. */
export function SignedIn({ what, children }: { what: string; children: ComponentChildren }) {
  if (!signedIn.value) return <SignInFirst what={what} />
  return children as preact.JSX.Element
}

export function Loading({ what }: { what: string }) {
  return <p class="muted loading">Loading {what}…</p>
}

/** A horizontal list of steps, the done ones marked: detected → confirmed → credited → swept. */
export function Steps({
  steps,
  label,
}: {
  steps: ReadonlyArray<{ name: string; done: boolean; at?: string | null }>
  label: string
}) {
  return (
    <ol class="steps" aria-label={label}>
      {steps.map((s) => (
        <li key={s.name} class={s.done ? 'done' : 'todo'} title={s.at ?? undefined}>
          <span class="dot" aria-hidden="true" />
          <span>
            {s.name}
            <span class="sr-only">{s.done ? ' (done)' : ' (not yet)'}</span>
          </span>
        </li>
      ))}
    </ol>
  )
}

/** A key figure: its label above, the value large. */
export function Figure({ label, children, testId }: { label: string; children: ComponentChildren; testId?: string }) {
  return (
    <div class="figure" data-testid={testId}>
      <span class="label">{label}</span>
      <span class="value">{children}</span>
    </div>
  )
}

/**
 * A table that may be wider than a phone: it scrolls sideways in its own box, and that box takes
 * the keyboard's focus so it can be scrolled without a mouse (axe: scrollable-region-focusable).
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1)
    // biome-ignore lint/a11y/useSemanticElements: a region landmark with a name; <section> would add one per table
    <div class="scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  )
}
