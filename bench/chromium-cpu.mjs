// What the Chromium a benchmark launched costs the machine (bench/push, bench/tab).
import { readdirSync, readFileSync } from 'node:fs'

// CPU seconds (user + system) of the Chromium this benchmark launched (Playwright starts it as our
// child): the browser, its renderers, GPU and utility processes; what the tabs cost the machine,
// not only their main threads. Another browser on the machine, and our other children (the
// pinger), are not counted.
export function chromiumCpu() {
  const procs = new Map() // pid -> { ppid, chromium, ticks }
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'))
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ') // fields from the 3rd (state) on
      procs.set(Number(pid), { ppid: Number(f[1]), chromium: /chrom/i.test(comm), ticks: Number(f[11]) + Number(f[12]) })
    } catch {} // gone meanwhile
  }
  let ticks = 0
  const tree = new Set([process.pid])
  for (let grew = true; grew;) { // children may be listed before their parents
    grew = false
    for (const [pid, p] of procs) {
      if (!tree.has(pid) && tree.has(p.ppid)) { tree.add(pid); grew = true }
    }
  }
  for (const pid of tree) if (procs.get(pid)?.chromium) ticks += procs.get(pid).ticks
  return ticks / 100 // USER_HZ
}
