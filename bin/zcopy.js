#!/usr/bin/env node
'use strict'

const yargs = require('yargs/yargs')
const { hideBin } = require('yargs/helpers')
const { UsageError } = require('./lib/usage-error')
const { version } = require('../package.json')

async function main (args) {
  await yargs(args)
    .scriptName('zcopy')
    .usage('$0 <command> [options]\n\nMove file bytes with sendfile(2): benchmark it, serve a folder with it, or check that it works here.')
    .command(require('./commands/bench'))
    .command(require('./commands/serve'))
    .command(require('./commands/doctor'))
    .demandCommand(1, 'choose a command: bench, serve or doctor')
    .strict()
    .version(version)
    .alias('v', 'version')
    .help()
    .alias('h', 'help')
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      throw message ? new UsageError(message) : error
    })
    .parseAsync()
}

// Bad input (yargs validation or a UsageError) exits 2, anything else 1;
// either way one line on stderr, never a stack trace.
main(hideBin(process.argv)).catch(error => {
  const usage = error instanceof UsageError
  const message = String(error.message).replace(/\s*\n\s*/g, ' ')
  process.stderr.write(`zcopy: ${message}${usage ? " (see 'zcopy --help')" : ''}\n`)
  process.exitCode = usage ? 2 : 1
})
