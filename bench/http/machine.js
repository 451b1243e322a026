'use strict'

// One line naming the machine, software and date, to go with pasted results.

const { readFileSync } = require('node:fs')
const os = require('node:os')
const { nginxVersion } = require('./nginx')

function cpuModel () {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (match) return match[1].trim()
  } catch {}
  return os.cpus()[0]?.model ?? 'unknown CPU'
}

// `peers`: more servers of the run with their versions (e.g. 'h2o 2.2.5').
function machineLine (peers = []) {
  const date = new Date().toISOString().replace('T', ' ').slice(0, 16)
  const nginx = nginxVersion()
  return `machine: ${cpuModel()}, ${os.availableParallelism()} cores, ${os.type()} ${os.release()}; ` +
    `Node ${process.version}${nginx ? `, nginx ${nginx}` : ''}${peers.map((peer) => `, ${peer}`).join('')}; ${date} UTC`
}

module.exports = { machineLine }
