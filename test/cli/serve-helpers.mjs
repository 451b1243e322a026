// Shared by the serve-*.test.mjs files: a served folder and a running CLI.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startCli, waitForStdout } from './cli.mjs'

export function makeRoot (files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-serve-'))
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  return root
}

// Starts `zcopy serve root --port 0 ...args`; → { cli, url, stop() → output }.
export async function startServe (root, args = [], { env = {}, port = ['--port', '0'] } = {}) {
  const cli = startCli(['serve', root, ...port, ...args], { env })
  const [, url] = await waitForStdout(cli, /at (https?:\/\/[^ ]+\/) \(/)
  return {
    cli,
    url,
    async stop (signal = 'SIGTERM') {
      cli.child.kill(signal)
      return cli.output()
    }
  }
}
