'use strict'
// `npm run lint`: neostandard (standard's rules for flat config, as @fastify/static
// uses), plus one local rule. `npx eslint --fix .` applies every fixable change.

const neostandard = require('neostandard')

// One name for a caught or received error: `err`, as lib/ writes it. Reports a
// catch clause's binding and a function parameter named `error` or `e` (arrow
// callbacks too: `.catch(error => ...)`, `.on('error', (e) => ...)`), and renames
// it with every reference when `err` is not used inside (`{ error }` becomes
// `{ error: err }`); otherwise it reports only.
const ERROR_NAMES = new Set(['error', 'e'])
const errName = {
  meta: {
    type: 'suggestion',
    fixable: 'code',
    docs: { description: 'name a caught or received error `err`' },
    messages: { name: 'Name the error `err`, not `{{name}}`.' },
    schema: []
  },
  create (context) {
    const sourceCode = context.sourceCode
    // `e` is only an error as a catch binding or as the sole parameter of an
    // 'error' handler or a .catch() callback; `error` is one wherever it is a parameter.
    function isErrorCallback (fn) {
      const call = fn.parent
      if (!call || call.type !== 'CallExpression' || !call.arguments.includes(fn)) return false
      const callee = call.callee
      const method = callee.type === 'MemberExpression' && !callee.computed ? callee.property.name : null
      if (method === 'catch') return true
      const first = call.arguments[0]
      return (method === 'on' || method === 'once') && first && first.type === 'Literal' && first.value === 'error'
    }
    // Renaming is safe when `err` appears nowhere inside: no use of an outer `err`
    // would be captured and no inner `err` would capture ours. (Shadowing an outer
    // `err` that is not used inside changes nothing.)
    function taken (node) {
      return /\berr\b/.test(sourceCode.getText(node))
    }
    function check (declarator, id, owner) {
      if (id.type !== 'Identifier' || !ERROR_NAMES.has(id.name)) return
      if (id.name === 'e' && owner.type !== 'CatchClause' && !isErrorCallback(owner)) return
      const variable = sourceCode.getDeclaredVariables(declarator).find((v) => v.name === id.name)
      const report = { node: id, messageId: 'name', data: { name: id.name } }
      if (variable && !taken(owner)) {
        report.fix = (fixer) => {
          const ids = new Set([id, ...variable.references.map((r) => r.identifier)])
          return [...ids].map((node) => {
            const parent = node.parent
            if (parent.type === 'Property' && parent.shorthand && parent.value === node) return fixer.replaceText(node, `${node.name}: err`)
            return fixer.replaceText(node, 'err')
          })
        }
      }
      context.report(report)
    }
    function params (fn) {
      for (const param of fn.params) check(fn, param.type === 'AssignmentPattern' ? param.left : param, fn)
    }
    return {
      CatchClause (node) { if (node.param) check(node, node.param, node) },
      FunctionDeclaration: params,
      FunctionExpression: params,
      ArrowFunctionExpression: params
    }
  }
}

module.exports = [
  {
    // Not source: dependencies, the addon's build output, shipped binaries, benchmark output,
    // and the folder test/types makes for docs/typescript.md's example (left behind if the
    // test is killed before its own cleanup).
    ignores: ['build/', 'prebuilds/', 'bench/out/', 'coverage/', 'test/types/docs-example-*/']
  },
  ...neostandard({ ts: true, filesTs: ['**/*.mts', '**/*.cts'] }),
  {
    plugins: { zcopy: { rules: { 'err-name': errName } } },
    rules: {
      'zcopy/err-name': 'error',
      // `(err) =>` as lib/ writes every arrow (bin/ wrote `error =>`).
      '@stylistic/arrow-parens': ['error', 'always'],
      // The tree's loops wait on flags that event handlers and awaited calls set
      // (`while (!stop) await ...`), which this rule cannot see.
      'no-unmodified-loop-condition': 'off',
      // `cond ? null : {` with the object literal on the following lines.
      '@stylistic/multiline-ternary': 'off',
      // A longer list goes in an object (a transfer's spec, startTransfer's
      // arguments): named at the call, in any order.
      'max-params': ['error', 5]
    }
  },
  {
    // The library's units stay small (issue 63): a file says one thing, a
    // function fits a screen. Tests, benchmarks and the CLI's scripts are
    // held by their own review.
    files: ['lib/**/*.js'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }]
    }
  },
  {
    files: ['**/*.d.ts'],
    // A declared value and an interface of the same name (`HttpError`) is one
    // declaration to TypeScript, which checks real redeclarations itself.
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  },
  {
    files: ['test/types/**', 'test/adapters/types/**'],
    // Type tests evaluate expressions only for their types: `void expr`.
    rules: { 'no-void': 'off' }
  }
]
