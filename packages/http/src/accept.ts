/** Whether the caller's `Accept` names `type` before JSON: `text/csv` for a report, `text/html` for a page to print. */
export const prefers = (accept: string | undefined, type: string): boolean => {
  if (!accept) return false
  const wanted = accept.indexOf(type)
  const json = accept.indexOf("application/json")
  return wanted >= 0 && (json < 0 || wanted < json)
}
