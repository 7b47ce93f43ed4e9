// Client-side reading of a workflow document being edited, for the graph preview only:
// validation is always the backend's (POST /workflows/validate).
import { parse as parseYaml } from 'yaml'

export type DocFormat = 'yaml' | 'json' | 'xml'

export interface ReadDocument {
  workflows: Record<string, { graph?: unknown }>
  error: string | null
}

export function readDocument(content: string, format: DocFormat): ReadDocument {
  if (format === 'xml') return { workflows: {}, error: 'the preview reads YAML and JSON; XML is shown as saved' }
  try {
    const doc: unknown = format === 'json' ? JSON.parse(content) : parseYaml(content)
    const workflows = (doc as { workflows?: unknown })?.workflows
    if (!workflows || typeof workflows !== 'object' || Array.isArray(workflows)) {
      return { workflows: {}, error: 'the document has no `workflows` mapping' }
    }
    return { workflows: workflows as ReadDocument['workflows'], error: null }
  } catch (exc) {
    return { workflows: {}, error: exc instanceof Error ? exc.message.split('\n')[0] : String(exc) }
  }
}
