// The tool form's own editors for `parameters` and `output_schema` (SchemaForm shows the other
// fields): rows, or JSON, either way.
import { FormJsonField } from './FormJsonField'
import type { CustomField } from './SchemaForm'
import { outputSchemaFromRows, type OutputRows, type ParamRow, parametersFromRows, rowsFromOutputSchema, rowsFromParameters } from '../lib/toolForm'
import { ParameterRows, PropertyRows } from './ToolRows'

const parameters: CustomField = ({ id, path, text, violations, onChange, onEdit }) => (
  <FormJsonField<ParamRow[]>
    id={id}
    label="parameters"
    text={text}
    toRows={(value) => rowsFromParameters(value ?? {})}
    fromRows={(rows) => parametersFromRows(rows)}
    onChange={onChange}
    onJsonEdit={() => onEdit(path)}
    renderForm={(rows, setRows, errors) => <ParameterRows id={id} rows={rows} setRows={setRows} errors={errors} violations={violations} onEdit={onEdit} />}
  />
)

const outputSchema: CustomField = ({ id, path, text, violations, onChange, onEdit }) => (
  <FormJsonField<OutputRows>
    id={id}
    label="output schema"
    text={text}
    toRows={rowsFromOutputSchema}
    fromRows={outputSchemaFromRows}
    onChange={onChange}
    onJsonEdit={() => onEdit(path)}
    formOnly="The form shows an object schema with properties; this schema is something else, so only the JSON view can edit it."
    renderForm={(out, setOut, errors) => (
      <PropertyRows id={id} rows={out.rows} setRows={(rows) => setOut({ ...out, rows })} errors={errors} violations={violations} onEdit={onEdit} />
    )}
  />
)

/** SchemaForm's editors of a tool config's fields, by path. */
export const TOOL_FIELDS: Record<string, CustomField> = { parameters, output_schema: outputSchema }
