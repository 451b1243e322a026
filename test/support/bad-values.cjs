'use strict'
// Bad argument values of every type, by the name a test reports them under: for
// the API sweep (test/api-sweep.test.mjs) and its child process.

const BAD = {
  undefined,
  null: null,
  NaN,
  '-1': -1,
  1.5: 1.5,
  '2**53': 2 ** 53,
  Infinity,
  '-Infinity': -Infinity,
  "''": '',
  "'str'": 'str',
  symbol: Symbol('bad'),
  bigint: 10n,
  true: true,
  '{}': {},
  '[]': [],
  'Object.create(null)': Object.create(null),
  function: () => {},
  EventTarget: new EventTarget(),
  '{ aborted: false }': { aborted: false },
  '{ aborted: true, reason }': { aborted: true, reason: new Error('fake') }
}

module.exports = { BAD }
