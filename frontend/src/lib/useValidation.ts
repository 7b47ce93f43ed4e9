// Live validation: the document is sent to POST /workflows/validate after a pause in typing.
// The answer also draws each workflow of the document (`graphs`), for the graph preview.
import { useEffect, useState } from 'react'
import { http, type ApiError, toApiError, type Violation } from '../api/client'
import type { DrawnNode } from '../api/types'

export interface ValidationState {
  checking: boolean
  valid: boolean | null
  violations: Violation[]
  /** Each workflow of the checked document as drawn (empty when it does not load). */
  graphs: Record<string, DrawnNode[]>
  error: ApiError | null
  checkedContent: string | null
}

const UNCHECKED: ValidationState = { checking: false, valid: null, violations: [], graphs: {}, error: null, checkedContent: null }

/** `content` null: nothing to check yet (a document still loading) — no verdict, no error. */
export function useValidation(content: string | null, format: 'yaml' | 'json' | 'xml', delayMs = 400): ValidationState {
  const [state, setState] = useState<ValidationState>(UNCHECKED)
  useEffect(() => {
    if (content === null) {
      setState(UNCHECKED)
      return
    }
    if (!content.trim()) {
      setState({ checking: false, valid: false, violations: [{ message: 'the document is empty', severity: 'error' }], graphs: {}, error: null, checkedContent: content })
      return
    }
    let live = true
    setState((s) => ({ ...s, checking: true }))
    const timer = setTimeout(() => {
      http.post('/workflows/validate', { body: { content, format } })
        .then((r) => live && setState({ checking: false, valid: r.valid, violations: r.violations, graphs: r.graphs ?? {}, error: null, checkedContent: content }))
        .catch((exc: unknown) => live && setState((s) => ({ ...s, checking: false, error: toApiError(exc, 'POST /workflows/validate') })))
    }, delayMs)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [content, format, delayMs])
  return state
}
