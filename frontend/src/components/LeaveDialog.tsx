// Asks before leaving a page with unsaved work: the modal Dialog (focus on "Stay", Escape stays).
// It lives at the end of <body>, so it shows even over a page kept hidden behind the sign-in.
import { createPortal } from 'react-dom'
import type { LeaveQuestion } from '../lib/router'
import { Dialog } from './Dialog'

export function LeaveDialog({ question, what }: { question: LeaveQuestion; what: string }) {
  if (question.pending === null) return null
  return createPortal(
    <Dialog title="Leave with unsaved changes?" onCancel={question.stay} testId="leave-dialog">
      <p>{what} Leaving drops them.</p>
      <div className="row">
        <button type="button" className="primary" data-autofocus onClick={question.stay}>Stay</button>
        <button type="button" className="danger" onClick={question.leave}>Leave without saving</button>
      </div>
    </Dialog>,
    document.body,
  )
}
