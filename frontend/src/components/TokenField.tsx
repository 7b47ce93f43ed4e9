// The API token (when the server sets API_TOKEN), kept in this browser's localStorage and
// sent as `Authorization: Bearer`.
import { useState } from 'react'
import { getToken, setToken } from '../api/client'

export function TokenField() {
  const [value, setValue] = useState(getToken)
  const [open, setOpen] = useState(false)
  const saved = getToken()
  return (
    <div className="token-field">
      <button type="button" className="link" onClick={() => setOpen(!open)} title="API token (only needed when the server sets API_TOKEN)">
        {saved ? 'API token set' : 'API token'}
      </button>
      {open && (
        <form
          className="token-form"
          onSubmit={(e) => {
            e.preventDefault()
            setToken(value.trim())
            setOpen(false)
            window.location.reload()
          }}
        >
          <input type="password" aria-label="API token" placeholder="API_TOKEN of the server" value={value} onChange={(e) => setValue(e.target.value)} />
          <button type="submit">Save</button>
        </form>
      )}
    </div>
  )
}
