import { readSnapshot } from "@erp/core"

/**
 * What demo data takes from the bundled catalogs and from real code lists: cities (so
 * every address is a real one), NCM codes for Brazilian goods and HTS codes for US ones.
 */

export interface CatalogCity {
  readonly id: number
  readonly name: string
  readonly state_code: string
  readonly population: number | null
}

let cities: Map<string, ReadonlyArray<CatalogCity>> | undefined

/** The catalog's cities of a country, the most populous first (so demo addresses cluster where people live). */
export const citiesOf = (country: "BR" | "US"): ReadonlyArray<CatalogCity> => {
  if (!cities) {
    const byCountry = new Map<string, Array<CatalogCity>>()
    for (const record of readSnapshot("cities").records) {
      const code = String(record.country_code)
      const list = byCountry.get(code) ?? []
      list.push({ id: Number(record.id), name: String(record.name), state_code: String(record.state_code), population: (record.population as number | null) ?? null })
      byCountry.set(code, list)
    }
    for (const list of byCountry.values()) list.sort((a, b) => (b.population ?? 0) - (a.population ?? 0) || a.id - b.id)
    cities = byCountry
  }
  return cities.get(country) ?? []
}

/** Goods with their NCM (Brazil) and HTS (US) codes: real headings of the Mercosur and US tariffs. */
export const GOODS: ReadonlyArray<{ readonly pt: string; readonly en: string; readonly ncm: string; readonly hts: string; readonly price: readonly [number, number] }> = [
  { pt: "Café em grãos torrado 1 kg", en: "Roasted coffee beans 1 kg", ncm: "09012100", hts: "0901.21.0020", price: [40, 120] },
  { pt: "Café moído 500 g", en: "Ground coffee 500 g", ncm: "09012100", hts: "0901.21.0040", price: [18, 45] },
  { pt: "Chá mate 250 g", en: "Mate tea 250 g", ncm: "09030010", hts: "0903.00.0000", price: [8, 25] },
  { pt: "Açúcar cristal 5 kg", en: "Crystal sugar 5 kg", ncm: "17019900", hts: "1701.99.5025", price: [15, 35] },
  { pt: "Chocolate em barra 100 g", en: "Chocolate bar 100 g", ncm: "18063210", hts: "1806.32.9000", price: [5, 18] },
  { pt: "Biscoito amanteigado 400 g", en: "Butter cookies 400 g", ncm: "19053100", hts: "1905.31.0049", price: [6, 20] },
  { pt: "Azeite de oliva extravirgem 500 ml", en: "Extra virgin olive oil 500 ml", ncm: "15091000", hts: "1509.20.2000", price: [25, 70] },
  { pt: "Caneca de cerâmica 300 ml", en: "Ceramic mug 300 ml", ncm: "69120000", hts: "6912.00.4810", price: [20, 60] },
  { pt: "Camiseta de algodão", en: "Cotton T-shirt", ncm: "61091000", hts: "6109.10.0012", price: [30, 90] },
  { pt: "Cadeira de escritório", en: "Office chair", ncm: "94013000", hts: "9401.30.8031", price: [350, 1500] },
  { pt: "Notebook 14 polegadas", en: "Laptop 14 inch", ncm: "84713012", hts: "8471.30.0100", price: [2500, 8000] },
  { pt: "Mouse sem fio", en: "Wireless mouse", ncm: "84716053", hts: "8471.60.9050", price: [40, 200] },
  { pt: "Papel A4 resma 500 folhas", en: "A4 paper ream 500 sheets", ncm: "48025610", hts: "4802.56.1000", price: [22, 45] },
  { pt: "Detergente líquido 500 ml", en: "Liquid detergent 500 ml", ncm: "34022000", hts: "3402.50.1100", price: [2, 8] },
  { pt: "Garrafa térmica 1 l", en: "Vacuum flask 1 l", ncm: "96170010", hts: "9617.00.1000", price: [60, 180] }
]
