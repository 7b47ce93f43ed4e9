// Copy a text to the clipboard; where the browser refuses (no permission, an insecure origin),
// the text's element is selected instead so the user copies it with their keyboard.
import { useEffect, useState, type RefObject } from 'react'

/** Select the whole text of `element` (the fallback when the clipboard is not available). */
function selectText(element: HTMLElement | null): boolean {
  const selection = window.getSelection()
  if (!element || !selection) return false
  selection.removeAllRanges()
  selection.selectAllChildren(element)
  return true
}

export function CopyButton({ text, source, label = 'Copy' }: { text: string; source: RefObject<HTMLElement | null>; label?: string }) {
  const [done, setDone] = useState<string | null>(null)
  useEffect(() => setDone(null), [text])
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard')
      await navigator.clipboard.writeText(text)
      setDone('Copied')
    } catch {
      const selected = selectText(source.current)
      // execCommand is deprecated, but it is what an insecure origin has left
      const copied = selected && document.execCommand?.('copy')
      setDone(copied ? 'Copied' : selected ? 'Selected: press Ctrl+C (⌘C) to copy' : 'Copy it by hand')
    }
  }
  return (
    <span className="copy-button">
      <button type="button" onClick={() => void copy()}>{label}</button>
      <span className="small muted" role="status" aria-live="polite">{done ?? ''}</span>
    </span>
  )
}
