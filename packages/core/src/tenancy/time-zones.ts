/**
 * A tenant's time zone decides its "today": a payable due yesterday there is overdue
 * there, whatever the server's clock says. Each tenant has an IANA zone, chosen when
 * it is created or defaulted from its country.
 */

/**
 * Countries spanning several zones, by where most of their people (and businesses) are.
 * Single-zone countries need no entry: the runtime's own time zone data names their zone.
 */
const MULTI_ZONE_DEFAULTS: Readonly<Record<string, string>> = {
  AR: "America/Argentina/Buenos_Aires",
  AU: "Australia/Sydney",
  BR: "America/Sao_Paulo",
  CA: "America/Toronto",
  CD: "Africa/Kinshasa",
  CL: "America/Santiago",
  CN: "Asia/Shanghai",
  CY: "Asia/Nicosia",
  DE: "Europe/Berlin",
  EC: "America/Guayaquil",
  ES: "Europe/Madrid",
  FM: "Pacific/Pohnpei",
  GL: "America/Nuuk",
  ID: "Asia/Jakarta",
  KI: "Pacific/Tarawa",
  KZ: "Asia/Almaty",
  MH: "Pacific/Majuro",
  MN: "Asia/Ulaanbaatar",
  MX: "America/Mexico_City",
  MY: "Asia/Kuala_Lumpur",
  NZ: "Pacific/Auckland",
  PF: "Pacific/Tahiti",
  PG: "Pacific/Port_Moresby",
  PT: "Europe/Lisbon",
  RU: "Europe/Moscow",
  UA: "Europe/Kyiv",
  UM: "Pacific/Wake",
  US: "America/New_York",
  UZ: "Asia/Tashkent"
}

/** The zones the runtime lists for a region (ICU data): `timeZones` on Node 20, `getTimeZones()` later. */
const zonesOf = (country: string): ReadonlyArray<string> => {
  try {
    const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & { timeZones?: Array<string>; getTimeZones?: () => Array<string> }
    return locale.getTimeZones?.() ?? locale.timeZones ?? []
  } catch {
    return []
  }
}

/** The zone a tenant of `country` gets when none is chosen: the main one, or UTC when the country's is not known. */
export const defaultTimeZone = (country: string): string => {
  const code = country.toUpperCase()
  const chosen = MULTI_ZONE_DEFAULTS[code]
  if (chosen) return chosen
  const zones = zonesOf(code)
  return zones.length === 1 ? zones[0] : "UTC"
}

/** The shape of an IANA zone name (`America/Sao_Paulo`, `UTC`); the store's zone list decides whether it exists. */
export const looksLikeTimeZone = (zone: string): boolean => /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(zone.trim())

/** Today's date (`YYYY-MM-DD`) in a zone. */
export const todayIn = (zone: string, now: Date = new Date()): string => {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(now)
  const part = (type: string) => parts.find((candidate) => candidate.type === type)?.value ?? ""
  return `${part("year")}-${part("month")}-${part("day")}`
}

/** Single-zone and listed countries, for the migration that gives existing tenants their zone. */
export const defaultTimeZoneSql = (column: string): string => {
  const codes = new Set([...Object.keys(MULTI_ZONE_DEFAULTS)])
  for (let first = 65; first <= 90; first++) {
    for (let second = 65; second <= 90; second++) {
      const code = String.fromCharCode(first, second)
      if (zonesOf(code).length === 1) codes.add(code)
    }
  }
  const cases = [...codes].sort().map((code) => `WHEN '${code}' THEN '${defaultTimeZone(code)}'`).join(" ")
  return `CASE ${column} ${cases} ELSE 'UTC' END`
}
