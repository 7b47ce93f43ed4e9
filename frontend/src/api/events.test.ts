import { describe, expect, it } from 'vitest'
import { parseSse } from './events'

describe('parseSse', () => {
  it('splits messages, skips comments and keeps the unfinished rest', () => {
    const text = 'retry: 2000\n\n: keep-alive\n\nid: 1\nevent: run_created\ndata: {"a":1}\n\nid: 2\nevent: node_started\ndata: {"b"'
    const { messages, rest } = parseSse(text)
    expect(messages).toEqual([{ id: '1', event: 'run_created', data: '{"a":1}' }])
    expect(rest).toBe('id: 2\nevent: node_started\ndata: {"b"')
    const next = parseSse(`${rest}:2}\n\n`)
    expect(next.messages).toEqual([{ id: '2', event: 'node_started', data: '{"b":2}' }])
    expect(next.rest).toBe('')
  })

  it('joins multi-line data and accepts CRLF', () => {
    const { messages } = parseSse('data: line one\r\ndata: line two\r\n\r\n')
    expect(messages).toEqual([{ id: null, event: 'message', data: 'line one\nline two' }])
  })
})
