// The addon's changesPending() (src/pending_changes.cc): whether the loop's
// inotify queue holds events its watches have not read yet. Asked before the
// open-file cache or the native lane answers from memory, so it must say true
// for a change made before the call, by this thread or another process, and
// false once the loop read the events. Where io_uring is allowed it answers
// from a ring's completions (one ring per loop, a Worker's closed with
// it); ZCOPY_IO_URING=0 asks the kernel with FIONREAD every time. Each
// way runs in a real child process, with real watches, renames and a Worker.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const FIXTURE = new URL('../fixtures/engine/changes-pending.cjs', import.meta.url).pathname

// Whether this kernel lets this process make an io_uring (0: anyone may).
function ringsAllowed () {
  try {
    return fs.readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim() === '0'
  } catch {
    return true // before Linux 6.6 there is no such switch
  }
}

const ANSWERS = {
  beforeWatch: false,
  watched: false,
  afterRename: true,
  askedAgain: true,
  afterRead: false,
  afterBurst: true,
  afterBurstRead: false,
  afterChild: true,
  afterChildRead: false
}

function run (dir, env, ...args) {
  return JSON.parse(execFileSync(process.execPath, [FIXTURE, dir, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }))
}

describe.runIf(native !== null)('changesPending', () => {
  let dir
  beforeEach(() => { dir = makeTempDir('zcopy-changes-pending-') })
  afterEach(() => removeTempDir(dir))

  it.runIf(ringsAllowed())('answers from an io_uring: every change seen, in a Worker too, each ring closed with its loop', () => {
    const result = run(dir, {}, '--worker')
    expect(result.main).toEqual({ ...ANSWERS, ringsMade: 1 })
    expect(result.worker).toEqual({ ...ANSWERS, ringsMade: 1 }) // its loop's own
    expect(result.ringsAfterWorker).toBe(result.ringsBefore)
  })

  it('ZCOPY_IO_URING=0: FIONREAD answers the same, with no ring', () => {
    const result = run(dir, { ZCOPY_IO_URING: '0' }, '--worker')
    expect(result.main).toEqual({ ...ANSWERS, ringsMade: 0 })
    expect(result.worker).toEqual({ ...ANSWERS, ringsMade: 0 })
    expect(result.ringsAfterWorker).toBe(result.ringsBefore)
  })
})
