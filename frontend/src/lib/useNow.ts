// The current time, ticking while something is active (durations of running runs and nodes
// move between events instead of freezing at the last one).
import { useEffect, useState } from 'react'

export function useNow(active: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [active, everyMs])
  return now
}
