// The document editor: CodeMirror with YAML highlighting; the backend's violations are shown on
// their lines (a marked line with the message as tooltip, and a gutter marker).
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language'
import { yaml } from '@codemirror/lang-yaml'
import { tags as t } from '@lezer/highlight'
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint'
import { StateEffect, StateField, type Extension } from '@codemirror/state'
import { Decoration, EditorView, type DecorationSet } from '@codemirror/view'
import CodeMirror from '@uiw/react-codemirror'
import { useEffect, useMemo, useRef } from 'react'
import type { Violation } from '../api/client'

export interface LineMark {
  line: number
  message: string
  severity: 'error' | 'warning'
}

// Constant: a new object on each render would make the editor reconfigure (and drop its panels).
const BASIC_SETUP = { foldGutter: true, highlightActiveLine: true, autocompletion: false }

const setLineMarks = StateEffect.define<LineMark[]>()

const lineMarkField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = marks.map(tr.changes)
    for (const effect of tr.effects) {
      if (!effect.is(setLineMarks)) continue
      const byLine = new Map<number, LineMark[]>()
      for (const m of effect.value) {
        if (m.line >= 1 && m.line <= tr.state.doc.lines) byLine.set(m.line, [...(byLine.get(m.line) ?? []), m])
      }
      const ranges = [...byLine.entries()].map(([line, ms]) => {
        const severity = ms.some((m) => m.severity === 'error') ? 'error' : 'warning'
        return Decoration.line({
          attributes: {
            class: `dt-${severity}-line`,
            'data-violation-line': String(line),
            title: ms.map((m) => m.message).join('\n'),
          },
        }).range(tr.state.doc.line(line).from)
      })
      next = Decoration.set(ranges, true)
    }
    return next
  },
  provide: (field) => EditorView.decorations.from(field),
})

export function lineMarks(violations: Violation[]): LineMark[] {
  return violations
    .filter((v) => typeof v.line === 'number' && v.line > 0)
    .map((v) => ({
      line: v.line as number,
      message: `${v.path ? `${v.path}: ` : ''}${v.message}`,
      severity: v.severity === 'warning' ? 'warning' : 'error',
    }))
}

interface Props {
  value: string
  onChange: (value: string) => void
  violations: Violation[]
  highlight: boolean
  onView?: (view: EditorView) => void
}

/** The editor in the page's palette (both themes), and its name for assistive technology. */
const EDITOR_THEME: Extension[] = [
  EditorView.theme({
    '&': { color: 'var(--fg)', backgroundColor: 'var(--input-bg)' },
    '.cm-content': { caretColor: 'var(--fg)' },
    '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
    '.cm-gutters': { backgroundColor: 'var(--surface)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
    '.cm-activeLine': { backgroundColor: 'var(--picked)' },
    '.cm-activeLineGutter': { backgroundColor: 'var(--hover)', color: 'var(--fg)' },
    '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--tag-border)' },
  }),
  EditorView.contentAttributes.of({ 'aria-label': 'Workflow document' }),
  syntaxHighlighting(
    HighlightStyle.define([
      { tag: [t.keyword, t.bool, t.null, t.atom], color: 'var(--syntax-keyword)' },
      { tag: [t.string, t.special(t.string), t.content], color: 'var(--syntax-string)' },
      { tag: [t.number, t.literal], color: 'var(--syntax-number)' },
      { tag: [t.propertyName, t.definition(t.propertyName)], color: 'var(--syntax-property)' },
      { tag: [t.comment, t.meta], color: 'var(--muted)', fontStyle: 'italic' },
      { tag: [t.punctuation, t.separator, t.typeName, t.labelName], color: 'var(--fg-soft)' },
    ]),
  ),
]

export function YamlEditor({ value, onChange, violations, highlight, onView }: Props) {
  const viewRef = useRef<EditorView | null>(null)
  const extensions = useMemo<Extension[]>(
    () => [...(highlight ? [yaml()] : []), lineMarkField, lintGutter(), EditorView.lineWrapping],
    [highlight],
  )
  const marks = useMemo(() => lineMarks(violations), [violations])

  useEffect(() => {
    const view = viewRef.current
    if (!view) return
    const doc = view.state.doc
    const diagnostics: Diagnostic[] = marks
      .filter((m) => m.line <= doc.lines)
      .map((m) => {
        const line = doc.line(m.line)
        return { from: line.from, to: line.to, severity: m.severity, message: m.message }
      })
    view.dispatch({ effects: setLineMarks.of(marks) })
    view.dispatch(setDiagnostics(view.state, diagnostics))
  }, [marks])

  return (
    <div className="yaml-editor" data-testid="yaml-editor">
      <CodeMirror
        value={value}
        onChange={onChange}
        extensions={extensions}
        height="460px"
        basicSetup={BASIC_SETUP}
        theme={EDITOR_THEME}
        onCreateEditor={(view) => {
          viewRef.current = view
          onView?.(view)
        }}
      />
    </div>
  )
}

/** Move the cursor to a line and scroll it into view. */
export function jumpToLine(view: EditorView | null, line: number): void {
  if (!view) return
  const target = view.state.doc.line(Math.min(Math.max(line, 1), view.state.doc.lines))
  view.dispatch({ selection: { anchor: target.from }, effects: EditorView.scrollIntoView(target.from, { y: 'center' }) })
  view.focus()
}
