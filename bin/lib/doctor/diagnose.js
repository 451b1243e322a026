'use strict'

// Everything `zcopy doctor` reports, as one plain object (what --json prints).

const { version } = require('../../../package.json')
const { createTempDir } = require('../../../tools/temp-dir')
const { environment } = require('./environment')
const { threadPool } = require('./thread-pool')
const { addonStatus, probeKernel } = require('./addon')
const { buildTools } = require('./build-tools')
const { probeFeatures } = require('./features')
const { selfTest } = require('./self-test')
const { adviceFor } = require('./advice')
const { laneRefusal } = require('../serve/lane-refusal')

// Whether zcopy serve's native lane (on by default) can run here: what serve's own check
// says of a plain HTTP server in one process (TLS and HTTP/2 turn it off
// wherever it runs). → { available, refusal }.
function nativeLane () {
  const refusal = laneRefusal({ tls: null, workers: 1 })
  return { available: refusal === null, refusal }
}

async function diagnose (zcopy, env = process.env) {
  const temp = createTempDir('zcopy-doctor-')
  try {
    const report = {
      zcopy: version,
      ...environment(),
      threadPool: threadPool(env),
      addon: addonStatus(),
      buildTools: buildTools(env),
      features: probeFeatures(probeKernel, temp.dir),
      selfTest: await selfTest({ pipeFile: zcopy.pipeFile, dir: temp.dir }),
      nativeLane: nativeLane()
    }
    report.zeroCopy = report.addon.loaded && report.selfTest.verified && report.selfTest.zeroCopy
    report.advice = adviceFor(report, env)
    return report
  } finally {
    temp.remove()
  }
}

module.exports = { diagnose }
