// A modal dialog: focus moves into it when it opens (to the first control marked autoFocus, else
// the dialog), Escape cancels, Tab stays inside, and focus returns where it was when it closes.
import { useEffect, useId, useRef } from 'react'

interface Props {
  title: string
  onCancel: () => void
  children: React.ReactNode
  testId?: string
}

export function Dialog({ title, onCancel, children, testId }: Props) {
  const box = useRef<HTMLDivElement>(null)
  const titleId = useId()
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null
    const el = box.current
    const first = el?.querySelector<HTMLElement>('[data-autofocus]')
    ;(first ?? el)?.focus()
    return () => before?.focus?.()
  }, [])
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation()
      onCancel()
    } else if (e.key === 'Tab' && box.current) {
      const controls = [...box.current.querySelectorAll<HTMLElement>('button, a[href], input, select, textarea')].filter((c) => !c.hasAttribute('disabled'))
      if (controls.length === 0) return
      const first = controls[0]
      const last = controls[controls.length - 1]
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault()
        last.focus()
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault()
        first.focus()
      }
    }
  }
  return (
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onCancel()}>
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} tabIndex={-1} ref={box} onKeyDown={onKeyDown} data-testid={testId}>
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
    </div>
  )
}
