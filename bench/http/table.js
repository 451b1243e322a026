'use strict'

// The result tables, markdown: one column per case, one row per server kind
// (median of the rounds, min–max spread), then zcopy's ratios (the kind
// `zcopy`) to each of the others: the median of the per-round ratios, where the
// two ran back to back, with their min–max; then server CPU per request (or per
// MiB), and the load generator's (it shares the machine's cores with the
// server).
//
// results: case → kind → [{ rate, cpu: { user, system } | null,
// clientCpu: { user, system } | null, errors, note? }] (one per round; `note`
// is shown in the cell); `rate` and the
// CPU in `unit` ({ rate: 'req/s', per: 'request' }, or MiB received).

const { medianBy, formatNumber, formatSpread, formatRatios } = require('./stats')

const ZCOPY = 'zcopy (node:http)'
// What a run's rate counts, whole responses or MiB received (run.js --bytes):
// `count(load)` of a load's result (see ./load), and its `rateOf(load, seconds)`.
const REQUESTS = Object.freeze({ rate: 'req/s', per: 'request', count: ({ requests }) => requests, rateOf: ({ requestsPerSecond }) => requestsPerSecond })
const BYTES = Object.freeze({ rate: 'MiB/s', per: 'MiB', count: ({ bytesRead }) => bytesRead / 2 ** 20, rateOf: (load, seconds) => BYTES.count(load) / seconds })
const LABELS = {
  'node:http res.end(buffer)': "Node's floor: node:http res.end(buffer)",
  'headers floor (6 × setHeader + res.end)': "headers floor: Node's floor with 6 × setHeader",
  'static floor (stat + setHeader + res.end)': 'static floor: statSync + 6 × setHeader + res.end(buffer)'
}
const SHORT = {
  'node:http res.end(buffer)': "Node's floor",
  'headers floor (6 × setHeader + res.end)': 'headers floor',
  'static floor (stat + setHeader + res.end)': 'static floor'
}

function row (label, cells) {
  return `| ${label} | ${cells.join(' | ')} |`
}

function header (title, cases) {
  return `${row(title, cases)}\n|---|${cases.map(() => '---:').join('|')}|`
}

// The ratio of `kind` to `base` in each round → `0.93× (0.81–1.02)`, or `0.93×`
// for one round; 'n/a' when the base served nothing.
function ratio (kindRuns, baseRuns) {
  const ratios = kindRuns.map((run, i) => run.rate / baseRuns[i].rate)
  return ratios.every(Number.isFinite) ? formatRatios(ratios) : 'n/a'
}

// `table`: { results, cases, kinds, rounds }, results[case][kind] the runs of
// each round; `zcopys`: the zcopy rows each other server is compared with.
function printTables (table, zcopys, unit = REQUESTS) {
  const { results, cases, kinds, rounds } = table
  const runs = (name, kind) => results[name][kind]
  let errors = false
  const cell = (name, kind) => {
    const failed = runs(name, kind).some((run) => run.errors > 0)
    errors ||= failed
    // What a run says of the answers themselves (revalidate.js: not a 304).
    const notes = [...new Set(runs(name, kind).map((run) => run.note).filter(Boolean))]
    return formatSpread(runs(name, kind).map((run) => run.rate)) + (failed ? ' *' : '') + (notes.length ? ` (${notes.join('; ')})` : '')
  }

  const spread = rounds > 1 ? `median (min–max) of ${rounds} rounds` : '1 round'
  console.log(`\n${header(`${unit.rate}, ${spread}`, cases)}`)
  for (const kind of kinds) console.log(row(LABELS[kind] ?? kind, cases.map((name) => cell(name, kind))))
  for (const zcopy of zcopys) {
    const name = zcopys.length > 1 ? (LABELS[zcopy] ?? zcopy) : 'zcopy'
    for (const base of kinds.filter((kind) => !kind.startsWith('zcopy'))) {
      console.log(row(`${name} ÷ ${SHORT[base] ?? base}`, cases.map((c) => ratio(runs(c, zcopy), runs(c, base)))))
    }
  }
  // The same Express app both ways: Express's own per-request work is in both.
  if (kinds.includes('zcopy (Express)') && kinds.includes('express.static')) {
    console.log(row('zcopy (Express) ÷ express.static', cases.map((name) => ratio(runs(name, 'zcopy (Express)'), runs(name, 'express.static')))))
  }
  if (errors) console.log('\ncells marked * had errors or non-2xx responses in some round (see the log above)')
  printCpuTable(table, 'cpu', `server CPU µs/${unit.per}, user + system`)
  printCpuTable(table, 'clientCpu', `load generator CPU µs/${unit.per} (while loading that server), user + system`)
}

function formatCpu ({ user, system }) {
  return `${formatNumber(user + system)} (${formatNumber(user)} + ${formatNumber(system)})`
}

// The round with the median total of `field` (for an even count, the mean of the
// middle two).
function medianCpu (runs, field) {
  const cpus = runs.map((run) => run[field] ?? null)
  if (cpus.includes(null)) return null
  return medianBy(cpus, ({ user, system }) => user + system)
}

// CPU per request, µs: total (user + system), of `field` ('cpu': the server's,
// 'clientCpu': the load generator's), for printTables' `table`.
function printCpuTable ({ results, cases, kinds, rounds }, field, title) {
  const cells = kinds.map((kind) => cases.map((name) => medianCpu(results[name][kind], field)))
  if (cells.every((cpus) => cpus.every((cpu) => cpu === null))) return
  const of = rounds > 1 ? `, median of ${rounds} rounds` : ''
  console.log(`\n${header(`${title}${of}`, cases)}`)
  kinds.forEach((kind, i) => {
    console.log(row(LABELS[kind] ?? kind, cells[i].map((cpu) => (cpu ? formatCpu(cpu) : 'n/a'))))
  })
}

module.exports = { BYTES, REQUESTS, printTables, formatCpu, row, header, LABELS, SHORT, ZCOPY }
