// Every public function with bad arguments of every type, one parameter or
// option at a time: each throws synchronously or rejects with a Node-style error
// (TypeError/RangeError with an ERR_* code for bad arguments), none hangs, and
// nothing escapes as an uncaught exception or an unhandled rejection (counted in
// a child process, test/engine/children/abort-api-sweep.cjs, that would
// otherwise die of them).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../lib/index.js'
import { BAD } from './support/bad-values.cjs'
import { makeFile, makeTempDir, removeTempDir } from './support/files.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const child = path.join(here, 'engine', 'children', 'abort-api-sweep.cjs')
const lib = path.join(here, '..', 'lib', 'index.js')

let dir
let file
let inFd
let outFd
beforeAll(() => {
  dir = makeTempDir()
  file = makeFile(dir, 'source.bin', 1000).file
  inFd = fs.openSync(file, 'r')
  outFd = fs.openSync('/dev/null', 'w')
})
afterAll(() => {
  fs.closeSync(inFd)
  fs.closeSync(outFd)
  removeTempDir(dir)
})

function thrown (call) {
  try {
    const result = call()
    if (result && typeof result.catch === 'function') result.catch(() => {})
  } catch (err) {
    return err
  }
  return null
}

function expectArgumentError (err, label) {
  expect(err, label).not.toBeNull()
  expect(['TypeError', 'RangeError'], label).toContain(err.constructor.name)
  expect(err.code, label).toMatch(/^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE|OUT_OF_RANGE)$/)
}

// Values a parameter accepts, left out of "must throw".
const accepted = {
  'sendfile options': ['undefined', '{}', 'Object.create(null)', 'EventTarget', '{ aborted: false }', '{ aborted: true, reason }'],
  'pipeFile options': ['undefined', '{}', 'Object.create(null)', 'EventTarget', '{ aborted: false }', '{ aborted: true, reason }'],
  'pipeFile source': ["''", "'str'"], // paths: rejected with ENOENT
  'pipeFile destination': ["''", "'str'"], // paths
  'options.start': ['undefined'],
  'options.end': ['undefined', 'Infinity'],
  'options.head': ['undefined', 'null', "''", "'str'"],
  'options.signal': ['undefined'],
  'options.onProgress': ['undefined', 'function']
}

describe('bad arguments throw synchronously, Node-style (in process)', () => {
  const cases = [
    ...['outFd', 'inFd', 'offset', 'length', 'options'].map((name, i) => [`sendfile ${name}`, 'sendfile ' + name, (v) => {
      const args = [outFd, inFd, 0, 10, {}]
      args[i] = v
      return zcopy.sendfile(...args)
    }]),
    ...['signal', 'onProgress'].map((key) => [`sendfile options.${key}`, `options.${key}`, (v) => zcopy.sendfile(outFd, inFd, 0, 10, { [key]: v })]),
    ...['source', 'destination', 'options'].map((name, i) => [`pipeFile ${name}`, 'pipeFile ' + name, (v) => {
      const args = [file, '/dev/null', {}]
      args[i] = v
      return zcopy.pipeFile(...args)
    }]),
    ...['start', 'end', 'head', 'signal', 'onProgress'].map((key) => [`pipeFile options.${key}`, `options.${key}`, (v) => zcopy.pipeFile(file, '/dev/null', { [key]: v })]),
    ['createReadStream options.signal', 'options.signal', (v) => zcopy.createReadStream(file, { signal: v })]
  ]
  for (const [title, acceptKey, call] of cases) {
    it(title, () => {
      for (const [label, value] of Object.entries(BAD)) {
        if ((accepted[acceptKey] || []).includes(label)) continue
        expectArgumentError(thrown(() => call(value)), `${title} = ${label}`)
      }
    })
  }

  it('a signal that is not an AbortSignal is an ERR_INVALID_ARG_TYPE, at once', () => {
    for (const signal of [{ aborted: false }, new EventTarget(), { aborted: false, addEventListener () {} }]) {
      for (const call of [
        () => zcopy.sendfile(outFd, inFd, 0, 10, { signal }),
        () => zcopy.pipeFile(file, '/dev/null', { signal }),
        () => zcopy.createReadStream(file, { signal })
      ]) {
        const err = thrown(call)
        expect(err).toBeInstanceOf(TypeError)
        expect(err.code).toBe('ERR_INVALID_ARG_TYPE')
      }
    }
  })
})

describe('the whole sweep in a child process', () => {
  let report
  beforeAll(async () => {
    const work = makeTempDir('zcopy-sweep-')
    try {
      const proc = spawn(process.execPath, [child, lib, work], { stdio: ['ignore', 'pipe', 'inherit'] })
      let stdout = ''
      proc.stdout.on('data', (d) => { stdout += d })
      const timer = setTimeout(() => proc.kill('SIGKILL'), 110_000)
      const [code] = await once(proc, 'close')
      clearTimeout(timer)
      report = { code, ...JSON.parse(stdout.trim() || '{}') }
    } finally {
      removeTempDir(work)
    }
  }, 120_000)

  it('runs to its end: no uncaught exception, no unhandled rejection', () => {
    expect(report.failed).toBeUndefined()
    expect(report.escaped).toEqual([])
    expect(report.code).toBe(0)
  })

  it('no call hangs', () => {
    expect(report.results.filter((r) => r.outcome === 'hang')).toEqual([])
  })

  it('every error of the engine\'s functions is a Node-style one (a code)', () => {
    const engine = report.results.filter((r) => ['sendfile', 'pipeFile', 'createReadStream'].includes(r.fn))
    expect(engine.length).toBeGreaterThan(300)
    for (const r of engine) {
      if (r.outcome !== 'throw' && r.outcome !== 'reject') continue
      expect(r.code, `${r.fn} ${r.param} = ${r.value}: ${r.name} ${r.message}`).toMatch(/^(ERR_[A-Z_]+|ABORT_ERR|E[A-Z]+)$/)
    }
  })

  it('sweeps sendFile and serveStatic too (they throw, reject or answer)', () => {
    const http = report.results.filter((r) => r.fn === 'sendFile' || r.fn === 'serveStatic')
    expect(http.length).toBeGreaterThan(300)
    for (const r of http) expect(['throw', 'reject', 'resolve', 'return']).toContain(r.outcome)
  })
})
