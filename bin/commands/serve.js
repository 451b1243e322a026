'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { UsageError } = require('../../tools/usage-error')
const { loadZcopy } = require('../../tools/load-zcopy')
const { announceListening, createSay } = require('../lib/serve/announce')
const { createInstance, stopSignal } = require('../lib/serve/instance')
const { stoppingLine } = require('../lib/serve/shutdown')
const { laneRefusal } = require('../lib/serve/lane-refusal')
const { lineWriter } = require('../lib/serve/log-output')
const { openUrl } = require('../lib/serve/open')
const { examples, options, resolveOptions } = require('../lib/serve/options')
const { isWorker, runPrimary, runWorker } = require('../lib/serve/workers')
const { renderExamples } = require('../lib/help-layout')
const { capYoungGeneration } = require('../lib/serve/young-generation')

exports.command = 'serve [dir]'
exports.describe = 'Serve a folder over HTTP with zcopy (serveStatic)'

exports.builder = (yargs) => {
  yargs
    .positional('dir', { describe: 'The folder to serve', type: 'string', default: '.' })
    .options(options)
  yargs.epilog(renderExamples(examples))
  return yargs
}

function checkFolder (dir) {
  let stats
  try {
    stats = fs.statSync(dir)
  } catch {
    throw new UsageError(`no such folder: ${dir}`)
  }
  if (!stats.isDirectory()) throw new UsageError(`not a folder: ${dir}`)
}

async function runSingle ({ zcopy, root, config, write, say }) {
  // Handlers first: a signal that comes as soon as the URL is out must stop
  // the server, not kill it.
  const stopped = stopSignal()
  const instance = createInstance({ zcopy, root, config, write })
  const address = await instance.listen(say)
  // Where the compressed variants go, as the banner says: the store makes its
  // folder while the server starts listening, usually done by now.
  const variantsFolders = instance.variantsFolder === null ? [] : [await instance.variantsFolder]
  const url = announceListening(say, { root, address, zcopy, config, variantsFolders })
  if (config.open) openUrl(url, say)
  await stopped
  const stopping = instance.stop() // the listener and idle connections are closed before this returns
  say(stoppingLine(instance.waitingFor(), config.shutdownTimeout))
  await stopping
}

// Serving the whole file system or a home folder is most often a slip (`zcopy
// serve ~` for `zcopy serve ~/site`): it goes ahead, with one line on stderr.
function warnIfBroad (root) {
  const what = root === path.parse(root).root ? 'the whole file system' : root === os.homedir() ? 'your home folder' : null
  if (what === null) return
  const running = typeof process.getuid === 'function' && process.getuid() === 0 ? ', as root' : ''
  process.stderr.write(`zcopy: warning: serving ${root}, ${what}${running}: every readable file below it can be downloaded\n`)
}

// The native lane where it can run, unless --no-native-lane; where it cannot,
// the server goes on without it, with one line saying why when it was asked
// for by name (without it, the start line just does not say "native lane").
function withNativeLane (config) {
  if (config.nativeLane === false) return config
  const refusal = laneRefusal(config)
  if (refusal === null) return { ...config, nativeLane: true }
  if (config.nativeLane === true && !isWorker()) process.stderr.write(`zcopy: --native-lane off: ${refusal}\n`)
  return { ...config, nativeLane: false }
}

exports.handler = async (argv) => {
  const root = path.resolve(argv.dir)
  checkFolder(root)
  const config = withNativeLane(resolveOptions(argv))
  if (!isWorker()) warnIfBroad(root)
  capYoungGeneration()
  const zcopy = loadZcopy()
  const write = lineWriter()
  const say = createSay(config, write)
  const context = { zcopy, root, config, write, say }
  if (isWorker()) return runWorker(context)
  if (config.workers > 1) return runPrimary({ ...context, count: config.workers })
  await runSingle(context)
  // Pending TLS handshakes or watches must not keep a stopped server alive.
  process.exit(process.exitCode || 0)
}
