// The body of a test answer ({ headers, body }) as its file's bytes, whatever
// Content-Encoding it came in: br, gzip or zstd decoded, none returned as is.
import zlib from 'node:zlib'
import { expect } from 'vitest'

export function decode (answer) {
  const encoding = answer.headers['content-encoding']
  if (encoding === 'br') return zlib.brotliDecompressSync(answer.body)
  if (encoding === 'gzip') return zlib.gunzipSync(answer.body)
  if (encoding === 'zstd') return zlib.zstdDecompressSync(answer.body)
  expect(encoding).toBeUndefined()
  return answer.body
}
