'use strict'

// `zcopy serve` owns its process, so once a crowd of connections has gone it
// collects at once rather than whenever V8 gets to it. What a crowd leaves
// (its sockets, TLS state, requests, responses, and the Buffers and C heap
// they reference) is freed only when V8 collects their objects, and an idle
// process collects late or not at all: V8's memory reducer ran 10 s to more
// than 60 s after 1,000 stalled TLS clients left, and not at all after some
// waves (issue 47), leaving the process at 1.7× its idle RSS. So when the open
// connections have fallen to a quarter of a peak of at least CROWD and stayed
// there for QUIET_MS, two full collections run (the second also shrinks the
// heap where V8 can: Node 22 and later), then the addon hands the C heap's
// free pages back to the system (trimMemory). Once per crowd: the next needs a new
// peak. A few milliseconds of the event loop for zcopy serve's small heap.
//
// V8 offers a collection to scripts only through its `gc` extension: the flag
// that exposes it is set once the first crowd has gone (as Jest's leak
// detector does it), and `gc` taken from a new context, so the process's own
// global stays as it was (unless the user started Node with --expose-gc).

const v8 = require('node:v8')
const vm = require('node:vm')
const { native } = require('../../../lib/engine')

const CROWD = 256
const QUIET_MS = 2000
const TRIM_DELAY_MS = 250 // ArrayBuffers' memory is freed by V8's sweeper, after the collection

const trimMemory = native !== null && typeof native.trimMemory === 'function' ? native.trimMemory : () => {}

let collector = null
// → V8's gc extension, exposed on first use.
function gcFunction () {
  if (collector !== null) return collector
  if (typeof globalThis.gc === 'function') {
    collector = globalThis.gc
  } else {
    v8.setFlagsFromString('--expose-gc')
    collector = vm.runInNewContext('gc')
  }
  return collector
}

// V8 12 (Node 22) and later take options, among them a collection that also
// shrinks the heap (what V8's memory reducer does, seconds later otherwise);
// V8 11 (Node 20) reads any object as a request for a minor collection.
const REDUCING = Number(process.versions.v8.split('.')[0]) >= 12
  ? { type: 'major', execution: 'sync', flavor: 'last-resort' }
  : undefined

function collectNow () {
  const gc = gcFunction()
  // The first frees the crowd's objects, whose native halves (TLS state,
  // write requests) then let go of their Buffers, which the second frees.
  gc()
  gc(REDUCING)
  setTimeout(trimMemory, TRIM_DELAY_MS).unref()
}

// Watches `server`'s connections from now on.
function collectAfterCrowds (server) {
  let open = 0
  let peak = 0
  let quiet = null

  function settle () {
    quiet = null
    if (open > peak / 4) return // they came back: the next close looks again
    peak = open
    collectNow()
  }

  function closed () {
    open--
    if (peak < CROWD || open > peak / 4) return
    if (quiet !== null) {
      quiet.refresh()
    } else {
      quiet = setTimeout(settle, QUIET_MS)
      quiet.unref()
    }
  }

  server.on('connection', (socket) => {
    open++
    if (open > peak) peak = open
    socket.once('close', closed)
  })
}

module.exports = { collectAfterCrowds, CROWD }
