'use strict'

// Pinning for a two-sided run on a small machine (run.js --pin): the server's
// processes and all their threads (pool, GC, workers it forks later inherit
// it) on one CPU, the load generator on another, so that neither takes the
// other's core and a server's lower CPU per request shows as throughput
// instead of being spent by the generator. Linux with taskset(1)
// (util-linux).

const { execFileSync, spawnSync } = require('node:child_process')
const os = require('node:os')
const { childrenOf } = require('./cpu')

const SERVER_CPU = '0'
const LOAD_CPU = '1'

// → why pinning cannot run here, or null.
function pinningUnavailable () {
  if (os.availableParallelism() < 2) return 'needs 2 CPUs'
  if (spawnSync('taskset', ['-V']).error !== undefined) return 'needs taskset (util-linux)'
  return null
}

// The process ids of `pid` and its descendants.
function treeOf (pid) {
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) tree.push(...childrenOf(tree[i]).map((child) => child.pid))
  return tree
}

// Every thread of `pid` and of its descendants onto the server's CPU.
function pinServer (pid) {
  for (const each of treeOf(pid)) execFileSync('taskset', ['-a', '-p', '-c', SERVER_CPU, String(each)], { stdio: 'ignore' })
}

// [command, args] that run `command` on the load generator's CPU.
function onLoadCpu (command, args) {
  return ['taskset', ['-c', LOAD_CPU, command, ...args]]
}

module.exports = { onLoadCpu, pinServer, pinningUnavailable }
