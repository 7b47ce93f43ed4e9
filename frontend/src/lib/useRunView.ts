// A run kept live: GET /runs/{id} once, then again after each server-sent event (batched), with
// the events themselves kept for the log.
import { useCallback, useEffect, useRef, useState } from 'react'
import { http, type ApiError, toApiError } from '../api/client'
import { followRunEvents } from '../api/events'
import type { RunDetail, RunEvent } from '../api/types'

export interface RunView {
  run: RunDetail | null
  events: RunEvent[]
  error: ApiError | null
  streamError: ApiError | null
  live: boolean
  refresh: () => void
}

export function useRunView(runId: string): RunView {
  const [run, setRun] = useState<RunDetail | null>(null)
  const [events, setEvents] = useState<RunEvent[]>([])
  const [error, setError] = useState<ApiError | null>(null)
  const [streamError, setStreamError] = useState<ApiError | null>(null)
  const [live, setLive] = useState(true)
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null)
  const path = `/runs/${encodeURIComponent(runId)}`

  const fetchRun = useCallback(async () => {
    try {
      setRun(await http.get('/runs/{run_id}', { params: { path: { run_id: runId } } }))
      setError(null)
    } catch (exc) {
      setError(toApiError(exc, `GET ${path}`))
    }
  }, [path, runId])

  const schedule = useCallback(() => {
    if (timer.current) return
    timer.current = setTimeout(() => {
      timer.current = null
      void fetchRun()
    }, 120)
  }, [fetchRun])

  useEffect(() => {
    setRun(null)
    setEvents([])
    setLive(true)
    setStreamError(null)
    void fetchRun()
    const seen = new Set<number>()
    const handle = followRunEvents(runId, {
      onEvent: (event) => {
        if (seen.has(event.position)) return
        seen.add(event.position)
        setEvents((list) => [...list, event])
        setStreamError(null)
        schedule()
      },
      onError: (e) => setStreamError(e),
      onEnd: () => {
        setLive(false)
        void fetchRun()
      },
    })
    return () => {
      handle.close()
      if (timer.current) clearTimeout(timer.current)
      timer.current = null
    }
  }, [runId, fetchRun, schedule])

  return { run, events, error, streamError, live, refresh: () => void fetchRun() }
}
