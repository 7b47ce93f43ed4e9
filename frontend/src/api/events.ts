// Server-sent events read over fetch (EventSource cannot send the Authorization header).
// Reconnects after a dropped connection from the last event id; stops after a terminal event,
// and on 401/403/404 (a 401 also reaches the session, which asks to sign in again).
import { ApiError, authHeaders, errorFromResponse } from './client'
import type { RunEvent, RunEventType } from './types'

export interface SseMessage {
  id: string | null
  event: string
  data: string
}

/** Split an SSE byte stream's text into messages; returns the messages and the unparsed rest. */
export function parseSse(buffer: string): { messages: SseMessage[]; rest: string } {
  const messages: SseMessage[] = []
  const normalized = buffer.replace(/\r\n?/g, '\n')
  const blocks = normalized.split('\n\n')
  const rest = blocks.pop() ?? ''
  for (const block of blocks) {
    let id: string | null = null
    let event = 'message'
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'id') id = value
      else if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
    if (data.length) messages.push({ id, event, data: data.join('\n') })
  }
  return { messages, rest }
}

const TERMINAL_EVENTS = new Set<RunEventType>(['run_succeeded', 'run_failed', 'run_cancelled'])

export interface StreamHandle {
  close(): void
}

/** Follow /runs/{id}/events from `after`; onEvent for each event, onError for each failure. */
export function followRunEvents(
  runId: string,
  handlers: { onEvent: (e: RunEvent) => void; onError: (e: ApiError) => void; onEnd?: () => void },
  after = 0,
): StreamHandle {
  const controller = new AbortController()
  let last = after
  let stopped = false

  const run = async () => {
    let failures = 0
    while (!stopped) {
      const path = `/runs/${encodeURIComponent(runId)}/events?after=${last}`
      try {
        const response = await fetch(path, {
          headers: { Accept: 'text/event-stream', ...authHeaders() },
          signal: controller.signal,
        })
        if (!response.ok || !response.body) {
          const text = await response.text()
          let data: unknown = text
          try {
            data = JSON.parse(text)
          } catch {
            /* not JSON */
          }
          const error = errorFromResponse(response.status, data, `GET ${path}`, response.headers.get('x-request-id'))
          // Not there, not signed in, or not allowed: trying again changes nothing.
          if ([401, 403, 404].includes(response.status)) {
            handlers.onError(error)
            return
          }
          throw error
        }
        failures = 0
        const reader = response.body.getReader()
        const decoder = new TextDecoder()
        let buffer = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buffer += decoder.decode(value, { stream: true })
          const parsed = parseSse(buffer)
          buffer = parsed.rest
          for (const message of parsed.messages) {
            const event = JSON.parse(message.data) as RunEvent
            if (message.id) last = Number(message.id)
            handlers.onEvent(event)
            if (TERMINAL_EVENTS.has(event.type)) {
              stopped = true
            }
          }
        }
        if (stopped) {
          handlers.onEnd?.()
          return
        }
      } catch (exc) {
        if (stopped || controller.signal.aborted) return
        failures += 1
        if (failures === 1 || failures % 5 === 0) {
          handlers.onError(
            exc instanceof ApiError
              ? exc
              : new ApiError({ status: 0, code: 'stream_error', message: `event stream interrupted (${String(exc)}); reconnecting`, where: `GET ${path}` }),
          )
        }
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000 * Math.max(failures, 1), 10000)))
    }
  }
  void run()
  return {
    close() {
      stopped = true
      controller.abort()
    },
  }
}
