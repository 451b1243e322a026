// A vitest reporter that names what is still running when a file takes far
// longer than any should: a file whose worker is stuck (a synchronous call
// that never returns, a pool thread blocked for ever) prints nothing, and CI
// then shows only its own timeout. Every minute, each file that started more
// than STILL_MS ago and has not finished is printed, with the test it is in (when its worker could say).
// vitest.config.mjs and scripts/test-node-lines.js add it beside the default
// reporter.
import path from 'node:path'

const STILL_MS = 5 * 60_000 // the slowest file takes ~70 s (the fuzz runs)

export default class StillRunningReporter {
  constructor () {
    this.files = new Map() // moduleId → { started, test }
    this.timer = null
  }

  onTestRunStart () {
    this.timer = setInterval(() => this.report(), 60_000)
    this.timer.unref()
  }

  onTestModuleStart (testModule) {
    this.files.set(testModule.moduleId, { started: Date.now(), test: null })
  }

  onTestCaseReady (testCase) {
    const file = this.files.get(testCase.module.moduleId)
    if (file) file.test = testCase.fullName
  }

  onTestModuleEnd (testModule) {
    this.files.delete(testModule.moduleId)
  }

  onTestRunEnd () {
    clearInterval(this.timer)
  }

  report () {
    const now = Date.now()
    for (const [id, { started, test }] of this.files) {
      if (now - started < STILL_MS) continue
      const where = test === null ? '' : ` (in "${test}")`
      process.stderr.write(`still running after ${Math.round((now - started) / 60_000)} min: ${path.relative(process.cwd(), id)}${where}\n`)
    }
  }
}
