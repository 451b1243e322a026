'use strict'

// The scheduling priority compressions run at, beside the server: nice 19,
// the lowest, when the machine has room (the process also puts itself in
// Linux's SCHED_IDLE class where the addon can, ./process.js); nice 10 when a
// job waited on a busy machine (hurried, ./background.js): about a tenth of a
// CPU's share against a busy thread at nice 0, so variants still get made;
// and how long they wait for the CPU before they take some.

const IDLE_NICE = 19
const HURRIED_NICE = 10
// The longest a compression is kept from the CPU on a busy machine before it
// takes some from the requests: a burst held back (./store.js), a job starved
// in SCHED_IDLE before it is hurried (./background.js).
const PATIENCE_MS = 10_000

// → the nice value for a compression process started `idle` or hurried.
function niceFor (idle) {
  return idle ? IDLE_NICE : HURRIED_NICE
}

module.exports = { IDLE_NICE, PATIENCE_MS, niceFor }
