#!/usr/bin/env node
'use strict'

const yargs = require('yargs/yargs')
const { hideBin } = require('yargs/helpers')
const { UsageError, failureLine } = require('./lib/usage-error')
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
const args = hideBin(process.argv)
main(args).catch(error => {
  process.stderr.write(failureLine(error, args) + '\n')
  process.exitCode = error instanceof UsageError ? 2 : 1
})
