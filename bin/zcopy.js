#!/usr/bin/env node
'use strict'

const yargs = require('yargs/yargs')
const { hideBin } = require('yargs/helpers')
const { UsageError, failureLine, COMMANDS } = require('../tools/usage-error')
const { helpWidth } = require('./lib/help-layout')
const { suggestFlags } = require('./lib/flag-suggestion')
const { version } = require('../package.json')

// What the user typed, made into what yargs reads:
// - `zcopy help [command]` is `zcopy [command] --help`;
// - a value that starts with '-' and a digit but is no number (`--sizes -5KiB`)
//   would be read as the short flags -5 -K -i -B: it is given to the flag
//   before it (`--sizes=-5KiB`), whose check then says what is wrong with it.
function normalizeArgs (args) {
  if (args[0] === 'help') {
    const [command, ...rest] = args.slice(1)
    if (command === undefined) return ['--help']
    if (!COMMANDS.includes(command)) {
      throw new UsageError(`no help for '${command}': the commands are ${COMMANDS.join(', ')}`)
    }
    return [command, ...rest, '--help']
  }
  const out = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const previous = out[out.length - 1]
    if (/^-\d/.test(arg) && !Number.isFinite(Number(arg)) && i > 0 && /^--?[a-z][\w-]*$/i.test(previous) && previous !== '--') {
      out[out.length - 1] = `${previous}=${arg}`
    } else {
      out.push(arg)
    }
  }
  return out
}

async function main (args) {
  await yargs(normalizeArgs(args))
    .scriptName('zcopy')
    .usage('$0 <command> [options]\n\nMove file bytes with sendfile(2): benchmark it, serve a folder with it, check that it works here, or build it.')
    .command(require('./commands/bench'))
    .command(require('./commands/serve'))
    .command(require('./commands/doctor'))
    .command(require('./commands/build'))
    .demandCommand(1, 'choose a command: bench, serve, doctor or build')
    .recommendCommands()
    .strict()
    .version(version)
    .alias('v', 'version')
    .help()
    .alias('h', 'help')
    .epilog("A command's options: zcopy help <command> (or zcopy <command> --help).")
    .wrap(helpWidth())
    // `usage`: yargs' usage of the command being parsed, whose described
    // options are its flags.
    .fail((message, err, usage) => {
      const suggestion = message && /^Did you mean (\S+)\?$/.exec(message)
      if (suggestion) message = `unknown command '${args[0]}': did you mean ${suggestion[1]}?`
      else if (message) message = suggestFlags(message, args, Object.keys(usage.getDescriptions())) ?? message
      throw message ? new UsageError(message) : err
    })
    .parseAsync()
}

// Bad input (yargs validation or a UsageError) exits 2, anything else 1;
// either way one line on stderr, never a stack trace.
const args = hideBin(process.argv)
main(args).catch((err) => {
  process.stderr.write(failureLine(err, args) + '\n')
  process.exitCode = err instanceof UsageError ? 2 : 1
})
