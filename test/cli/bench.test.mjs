import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { CLI, groupGone, runCli, startCli } from './cli.mjs'

// Each run gets its own TMPDIR, so the test can see that the CLI's temporary
// files are gone afterwards.
let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-cli-test-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

const require = createRequire(import.meta.url)
const bench = (args, env = {}) => runCli(['bench', ...args], { env: { TMPDIR: tmpdir, ...env } })
const leftovers = () => fs.readdirSync(tmpdir)

const METHODS = { socket: ['zcopy', 'stream'], http: ['zcopy', 'stream'], file: ['zcopy', 'stream', 'copyFile'] }

describe('zcopy bench --json', () => {
  test('every mode, method and size, bytes matching the sizes, ratios finite and positive', async () => {
    const sizes = [4096, 65536 + 1]
    const cli = startCli(['bench', '--sizes', '4KiB,65537', '--iterations', '3', '--json'], { env: { TMPDIR: tmpdir } })
    const { code, stdout, stderr } = await cli.output()
    expect(await groupGone(cli)).toBe(true) // no sink or server left running (or listening)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const { machine, results } = JSON.parse(stdout)

    expect(machine).toMatchObject({ node: process.version, cpus: os.cpus().length, zeroCopy: expect.any(Boolean) })
    expect(Number.isNaN(Date.parse(machine.date))).toBe(false)

    const expected = Object.entries(METHODS).flatMap(([mode, methods]) =>
      sizes.flatMap((size) => methods.map((method) => ({ mode, size, method }))))
    expect(results.map(({ mode, size, method }) => ({ mode, size, method }))).toEqual(expected)

    for (const row of results) {
      expect(row.operations).toBe(3)
      expect(row.bytesMoved).toBe(row.size * row.operations)
      for (const key of ['throughput', 'opsPerSec', 'p50', 'p99', 'ratio', 'peakRss']) {
        expect(Number.isFinite(row[key]) && row[key] > 0, `${row.mode} ${row.size} ${row.method} ${key}: ${row[key]}`).toBe(true)
      }
      expect(row.p99).toBeGreaterThanOrEqual(row.p50)
      for (const key of ['user', 'system', 'mainThread']) {
        expect(Number.isFinite(row.cpuPerGiB[key]) && row.cpuPerGiB[key] >= 0).toBe(true)
      }
      if (row.method === 'stream') expect(row.ratio).toBe(1)
    }
    expect(leftovers()).toEqual([])
  })

  test('with the native binding disabled it still runs, and says so', async () => {
    const { code, stdout } = await bench(['--mode', 'socket', '--sizes', '1KiB', '--iterations', '2', '--concurrency', '2', '--json'], { ZCOPY_NATIVE: '0' })
    expect(code).toBe(0)
    const { machine, results } = JSON.parse(stdout)
    expect(machine.zeroCopy).toBe(false)
    expect(results.map((row) => [row.method, row.bytesMoved])).toEqual([['zcopy', 2048], ['stream', 2048]])
  })
})

describe('zcopy bench --rounds and --baseline', () => {
  test('one row per method: medians of the rounds, their min–max, ratios over the baseline of the same round', async () => {
    const { code, stdout, stderr } = await bench(['--mode', 'file', '--sizes', '2KiB', '--iterations', '2', '--rounds', '3', '--baseline', 'copyFile', '--json'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report).toMatchObject({ rounds: 3, baseline: 'copyFile' })
    expect(report.results.map((row) => row.method)).toEqual(['zcopy', 'stream', 'copyFile'])
    for (const row of report.results) {
      expect(row).toMatchObject({ mode: 'file', size: 2048, rounds: 3, operations: 2, bytesMoved: 4096 })
      const { throughputRange: t, ratioRange: r } = row
      expect(t.min > 0 && t.min <= row.throughput && row.throughput <= t.max).toBe(true)
      expect(r.min > 0 && r.min <= row.ratio && row.ratio <= r.max).toBe(true)
      for (const key of ['user', 'system', 'mainThread']) expect(row.cpuPerGiB[key]).toBeGreaterThanOrEqual(0)
    }
    // Each round's baseline is itself: 1 in every round.
    expect(report.results[2]).toMatchObject({ ratio: 1, ratioRange: { min: 1, max: 1 } })
    expect(leftovers()).toEqual([])
  })

  test('the tables name the baseline and say how the figures were taken', async () => {
    const { code, stdout } = await bench(['--mode', 'file', '--sizes', '2KiB', '--iterations', '2', '--rounds', '2', '--baseline', 'copyFile', '--markdown'])
    expect(code).toBe(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/ · median of 2 alternating rounds \(min–max\)$/)
    expect(lines[2]).toMatch(/\| MB\/s \|.*\| vs copyFile \|$/)
    // A figure whose rounds differ carries their min–max; the baseline's ratio is 1× alone.
    const cells = lines.slice(4).map((line) => line.split(' | '))
    expect(cells.map((row) => row[2])).toEqual(['zcopy', 'stream', 'copyFile'])
    for (const row of cells) expect(row[3]).toMatch(/^[\d.,]+( \([\d.,]+–[\d.,]+\))?$/)
    expect(cells[2].at(-1)).toBe('1× |')

    const text = await bench(['--mode', 'file', '--sizes', '2KiB', '--iterations', '2', '--rounds', '2'])
    expect(text.code).toBe(0)
    for (const line of text.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
    expect(text.stdout).toMatch(/vs stream$/m)
  })
})

describe('zcopy bench output formats', () => {
  test('a readable table by default, no progress line when stderr is not a TTY', async () => {
    const { code, stdout, stderr } = await bench(['--mode', 'file', '--sizes', '2KiB', '--iterations', '2'])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    const lines = stdout.trimEnd().split('\n')
    // the machine, on as many lines as its parts need within 80 columns (how
    // many depends on the machine's names), then a blank line and the table
    const header = lines.findIndex((line) => line.startsWith('mode'))
    const machine = lines.slice(0, header - 1)
    expect(machine.length).toBeGreaterThanOrEqual(1)
    expect(lines[header - 1]).toBe('')
    expect(machine.join(' · ')).toContain(`Node ${process.version}`)
    expect(lines[header]).toMatch(/^mode\s+size\s+method\s+MB\/s\s+p50 ms\s+p99 ms\s+main ms\/GiB\s+vs stream$/)
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80) // an 80-column terminal
    const table = lines.slice(header + 1, lines.indexOf('', header)) // then the notes (see below)
    expect(table.map((line) => /^(\S+)\s+(\d+ \S+)\s+(\S+)/.exec(line).slice(1).join(' '))).toEqual([
      'file 2 KiB zcopy', 'file 2 KiB stream', 'file 2 KiB copyFile'
    ])
    expect(lines[header + 2]).toMatch(/ 1×$/)
  })

  // Figures as wide as a loaded machine makes them (a spread of three-digit
  // ratios, latencies and main-thread costs in the millions) still fit in 80
  // columns: the columns then go one space apart.
  test('the default table fits 80 columns whatever the figures', () => {
    const { renderTable } = require('../../tools/render/table')
    const { NARROW } = require('../../tools/render/columns')
    const machine = { date: new Date().toISOString(), os: 'Linux 6.18.44-fc-v669', arch: 'x64', cpus: 2, cpuModel: 'AMD EPYC', node: process.version, zcopy: '0.1.0', zeroCopy: true }
    const row = (mode, method, ratio) => ({
      mode,
      size: 512 * 1024,
      method,
      throughput: 12_345e6,
      throughputRange: { min: 1_234e6, max: 12_345e6 },
      opsPerSec: 1,
      p50: 0.0123,
      p99: 12_345,
      cpuPerGiB: { user: 1, system: 1, mainThread: 1_234_567 },
      peakRss: 1,
      ratio,
      ratioRange: ratio === 1 ? { min: 1, max: 1 } : { min: 0.123, max: 0.456 }
    })
    const report = { machine, rounds: 5, baseline: 'copyFile', results: [row('socket', 'zcopy', 0.234), row('socket', 'copyFile', 1)] }
    const lines = renderTable(report, NARROW, { fit: true }).trimEnd().split('\n')
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80)
    expect(lines.at(-2)).toBe('socket 512 KiB zcopy    12,300 0.0123 12,300   1,230,000 0.234× (0.123–0.456)')
    // Without the fit the same figures take more than 80 (so the fit is what holds them).
    expect(Math.max(...renderTable(report, NARROW).split('\n').map((line) => line.length))).toBeGreaterThan(80)
  })

  test('--wide: every column in the terminal table', async () => {
    const { code, stdout } = await bench(['--mode', 'file', '--sizes', '2KiB', '--iterations', '2', '--wide'])
    expect(code).toBe(0)
    expect(stdout.split('\n').find((line) => line.startsWith('mode'))).toMatch(/^mode\s+size\s+method\s+MB\/s\s+ops\/s\s+p50 ms\s+p99 ms\s+CPU user ms\/GiB\s+CPU sys ms\/GiB\s+main thread ms\/GiB\s+peak RSS MiB\s+vs stream$/)
  })

  // script(1) runs the CLI on a pseudo-terminal, so that stderr is a TTY.
  const hasScript = spawnSync('script', ['--version']).status === 0
  test.skipIf(!hasScript)('a progress line on stderr when it is a TTY, cleared at the end', () => {
    const command = `'${process.execPath}' '${CLI}' bench --mode file --sizes 2KiB --iterations 2`
    const output = execFileSync('script', ['-qec', command, '/dev/null'], { env: { ...process.env, TMPDIR: tmpdir }, encoding: 'utf8', timeout: 60_000 })
    expect(output).toContain('\r\x1b[K[1/3] file 2 KiB zcopy…')
    expect(output).toContain('\r\x1b[K[3/3] file 2 KiB copyFile…\r\x1b[K')
    expect(output).toMatch(/file\s+2 KiB\s+copyFile/)
    expect(leftovers()).toEqual([])

    const rounds = execFileSync('script', ['-qec', `${command} --rounds 2`, '/dev/null'], { env: { ...process.env, TMPDIR: tmpdir }, encoding: 'utf8', timeout: 60_000 })
    expect(rounds).toContain('\r\x1b[K[1/6] file 2 KiB zcopy (round 1/2)…')
    expect(rounds).toContain('\r\x1b[K[4/6] file 2 KiB stream (round 2/2)…') // rotated: stream first in round 2
  })

  // Issue 65, item 13: a verdict from this run's figures, the unit explained,
  // and how to get more rounds.
  test('under the table: one verdict line, what ms/GiB means, how to get more rounds', async () => {
    const { code, stdout } = await bench(['--mode', 'socket', '--sizes', '4KiB,64KiB', '--iterations', '3'])
    expect(code).toBe(0)
    const ratio = (size) => stdout.split('\n').find((line) => new RegExp(`^socket\\s+${size}\\s+zcopy\\s`).test(line)).trim().split(/\s+/).at(-1)
    // The sentences under the table, wrapped to its 80 columns.
    const notes = stdout.slice(stdout.indexOf('\nzcopy moved') + 1)
    for (const line of notes.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
    const sentences = notes.trimEnd().split('\n').join(' ')
    expect(sentences.match(/zcopy moved/g)).toHaveLength(1)
    expect(sentences).toContain(`zcopy moved 64 KiB over a socket ${ratio('64 KiB')} ${Number.parseFloat(ratio('64 KiB')) > 1 ? 'faster than' : 'the speed of'} the stream pipe, 4 KiB ${ratio('4 KiB')}: on this machine, in this run main ms/GiB: ms of JavaScript-thread CPU per GiB moved`)
    expect(sentences).toMatch(/ One round(, noisy \(a p99 [\d.,]+× its p50\))?: --rounds 5 gives each figure's median and min–max over 5$/)
  })

  test('--markdown prints a table to paste and --svg writes a bar chart, and says where', async () => {
    const svg = path.join(tmpdir, 'chart.svg')
    const { code, stdout, stderr } = await bench(['--mode', 'socket', '--sizes', '8KiB', '--iterations', '2', '--markdown', '--svg', svg])
    expect(code).toBe(0)
    expect(stderr).toBe(`zcopy: wrote the chart to ${svg}\n`)
    const lines = stdout.trimEnd().split('\n')
    // Issue 50, item 6: the table names the commit it measured (run from a checkout).
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    expect(lines[0]).toMatch(new RegExp(` · zcopy [^ ]+ \\(commit ${head}(-dirty)?\\) · `))
    expect(lines[2]).toMatch(/^\| mode \| size \| method \| MB\/s \|.*\| vs stream \|$/)
    expect(lines[3]).toMatch(/^\| --- \| ---: \| --- \| ---: \|/)
    expect(lines.slice(4).map((line) => line.split(' | ').slice(0, 3).join(' '))).toEqual(['| socket 8 KiB zcopy', '| socket 8 KiB stream'])

    const chart = fs.readFileSync(svg, 'utf8')
    expect(chart).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    expect(chart.trimEnd()).toMatch(/<\/svg>$/)
    expect(chart.match(/<rect /g)).toHaveLength(3) // background + one bar per method
    expect(chart).toContain('socket · 8 KiB')
    // The subtitle is wrapped, none of its lines cut at the chart's 900 px.
    const subtitle = [...chart.matchAll(/<text [^>]*class="sub">([^<]*)<\/text>/g)].map(([, line]) => line)
    expect(subtitle.join(' · ')).toMatch(/ · bars scaled to the fastest of each group$/)
    for (const line of subtitle) expect(line.length).toBeLessThanOrEqual(115)
    expect(chart).not.toMatch(/<script|href=/)
    expect(leftovers()).toEqual(['chart.svg'])
  })
})

describe('zcopy bench cleanup', () => {
  test('Ctrl-C removes the temporary files', async () => {
    const cli = startCli(['bench', '--mode', 'file', '--sizes', '1MiB', '--duration', '600'], { env: { TMPDIR: tmpdir } })
    // Wait until the benchmark is running on its temporary file.
    await new Promise((resolve) => {
      const poll = setInterval(() => {
        const dirs = leftovers()
        if (dirs.length > 0 && fs.readdirSync(path.join(tmpdir, dirs[0])).length > 0) {
          clearInterval(poll)
          resolve()
        }
      }, 20)
    })
    cli.child.kill('SIGINT')
    const { code } = await cli.output()
    expect(code).toBe(130)
    expect(leftovers()).toEqual([])
    expect(await groupGone(cli)).toBe(true)
  })
})
