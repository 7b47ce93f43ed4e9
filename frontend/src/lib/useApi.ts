// Load something from the API: data, the error (what and where) and a reload function.
import { useCallback, useEffect, useState } from 'react'
import { ApiError, toApiError } from '../api/client'

export function useApi<T>(load: () => Promise<T>, deps: unknown[], where: string) {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const stable = useCallback(load, deps)
  useEffect(() => {
    let live = true
    setLoading(true)
    stable()
      .then((value) => {
        if (!live) return
        setData(value)
        setError(null)
      })
      .catch((exc: unknown) => live && setError(toApiError(exc, where)))
      .finally(() => live && setLoading(false))
    return () => {
      live = false
    }
  }, [stable, tick, where])
  return { data, error, loading, reload: () => setTick((t) => t + 1), setData }
}
