// After `vite build`: a brotli (.br) and a gzip (.gz) copy of every text file of the bundle,
// made once here so the server sends them as they are (no compression per request).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const TEXT = /\.(js|css|html|svg|json|txt|map)$/
const MIN_BYTES = 512

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })
}

let files = 0
for (const path of walk('dist')) {
  if (!TEXT.test(path)) continue
  const data = readFileSync(path)
  if (data.length < MIN_BYTES) continue
  writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
  writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }))
  files += 1
}
console.log(`compressed ${files} files (brotli and gzip)`)
