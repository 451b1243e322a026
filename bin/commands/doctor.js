'use strict'

const { loadZcopy } = require('../../tools/load-zcopy')
const { diagnose } = require('../lib/doctor/diagnose')
const { renderReport } = require('../lib/doctor/render')
const { renderExamples } = require('../lib/help-layout')

const EXAMPLES = [
  ['$0 doctor', 'the report, with a line saying what to fix'],
  ['$0 doctor --json', 'the same as JSON']
]

exports.command = 'doctor'
exports.describe = 'Check whether zero-copy works here, and if not, why and how to fix it'

exports.builder = (yargs) => yargs
  .options({
    json: { describe: 'Print the whole report as one JSON object on stdout', type: 'boolean' }
  })
  .epilog(`${renderExamples(EXAMPLES)}

Reports Node and N-API, platform, C library, kernel, where the native addon was loaded from \
(or why it was not), the kernel features zcopy relies on, the thread-pool size, and a 1-second self-test \
through a loopback TCP connection. Exit code 0 when zero-copy works, 1 when zcopy falls back to streams. \
It also says whether zcopy serve's native lane (on by default) can run here.`)

exports.handler = async (argv) => {
  const zcopy = loadZcopy()
  const report = await diagnose(zcopy)
  process.stdout.write(argv.json ? JSON.stringify(report, null, 2) + '\n' : renderReport(report))
  if (!report.zeroCopy) process.exitCode = 1
}
