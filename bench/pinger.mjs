// Shared by the benchmarks: the host's stall, measured from outside the benchmark's own process.
import { spawn } from 'node:child_process'

// A GET /ping every 20 ms from a process of its own, so that the benchmark's own work (reading a
// 33 MB body, polling) never shows up as the host's stall. stop() resolves [[ms, ok] …]; a ping that
// failed counts with the time it waited.
export function startPinger(port) {
  const code = `
    let stop = false
    // Told to stop, or its parent gone (stdin closed): it never outlives the benchmark.
    process.stdin.on('data', () => { stop = true })
    process.stdin.on('end', () => { stop = true })
    const out = []
    ;(async () => {
      while (!stop) {
        const t = process.hrtime.bigint()
        let ok = true
        try {
          await fetch('http://127.0.0.1:${port}/plugins/kopt-bench-feeder/ping', { signal: AbortSignal.timeout(120000) }).then(r => r.text())
        } catch { ok = false }
        out.push([Number(process.hrtime.bigint() - t) / 1e6, ok])
        await new Promise(resolve => setTimeout(resolve, 20))
      }
      process.stdout.write(JSON.stringify(out), () => process.exit(0))
    })()`
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] })
  let text = ''
  child.stdout.on('data', (d) => { text += d })
  const done = new Promise((resolve) => child.on('exit', () => resolve(JSON.parse(text || '[]'))))
  return { stop: () => { child.stdin.end('x'); return done } }
}
