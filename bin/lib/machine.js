'use strict'

const os = require('node:os')
const { version } = require('../../package.json')

// What a reader needs to judge benchmark figures from another machine.
function machineInfo ({ zeroCopyAvailable }) {
  const cpus = os.cpus()
  return {
    date: new Date().toISOString(),
    os: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    cpuModel: cpus.length > 0 ? cpus[0].model.trim() : 'unknown',
    cpus: cpus.length,
    memory: os.totalmem(),
    node: process.version,
    zcopy: version,
    zeroCopy: zeroCopyAvailable,
    uvThreadpoolSize: Number(process.env.UV_THREADPOOL_SIZE) || 4
  }
}

module.exports = { machineInfo }
