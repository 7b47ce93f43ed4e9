// Asks before leaving a page with unsaved work: a modal dialog (focus on "Stay", Escape stays).
// It lives at the end of <body>, so it shows even over a page kept hidden behind the sign-in.
import { useEffect, useRef } from 'react'
import { createPortal } from 'react-dom'
import type { LeaveQuestion } from '../lib/router'

export function LeaveDialog({ question, what }: { question: LeaveQuestion; what: string }) {
  const ref = useRef<HTMLDialogElement | null>(null)
  const open = question.pending !== null
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) {
      if (typeof dialog.showModal === 'function') dialog.showModal()
      else dialog.setAttribute('open', '')
    } else if (!open && dialog.open) {
      if (typeof dialog.close === 'function') dialog.close()
      else dialog.removeAttribute('open')
    }
  }, [open])
  return createPortal(
    <dialog
      ref={ref}
      className="leave-dialog"
      data-testid="leave-dialog"
      aria-labelledby="leave-dialog-title"
      onCancel={(e) => {
        e.preventDefault() // Escape: stay (the dialog closes through `open`)
        question.stay()
      }}
      onClose={question.stay} // closed by the browser itself (a repeated Escape): stay too
    >
      {open && (
        <>
          <h2 id="leave-dialog-title">Leave with unsaved changes?</h2>
          <p>{what} Leaving drops them.</p>
          <div className="row">
            <button type="button" className="primary" autoFocus onClick={question.stay}>Stay</button>
            <button type="button" className="danger" onClick={question.leave}>Leave without saving</button>
          </div>
        </>
      )}
    </dialog>,
    document.body,
  )
}
