/**
 * The chart, hand-written SVG: per endpoint one bar of req/s per database
 * size (log scale, left axis), the Bun.serve bound of the same bar as a dashed
 * outline, the server's p99 as a diamond (log scale, right axis), the ratios
 * under each group.
 */
import { ENDPOINT_NAMES } from './endpoints.ts'
import { noise, NOISY_PCT, type Results } from './report.ts'

const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2']
const DARK = ['#1f3d5c', '#8a4a0b', '#2a5a24', '#5e3a56', '#2f5f5b']

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const short = (n: number) =>
  n >= 1e6
    ? `${+(n / 1e6).toFixed(1)}M`
    : n >= 1e4
      ? `${Math.round(n / 1e3)}k`
      : n >= 1e3
        ? `${+(n / 1e3).toFixed(1)}k`
        : `${Math.round(n)}`
const fmtMs = (n: number) => (n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2))

type EndpointResult = Results['sizes'][number]['endpoints'][number]
const noisy = (e: EndpointResult) => Math.max(noise(e.contention.server), noise(e.contention.bound)) > NOISY_PCT

/** where the variants other than one pinned process on SQLite ran, for the subtitle */
function pinning(sizes: Results['sizes']): string {
  const notes: string[] = []
  if (sizes.some((s) => s.variant?.backend === 'postgres')) notes.push('PostgreSQL not pinned')
  if (sizes.some((s) => (s.variant?.instances ?? 1) > 1)) notes.push('several instances on both cores')
  return notes.length ? ` (${notes.join('; ')})` : ''
}

export function chart(r: Results): string {
  const W = 1400
  const H = 900
  const left = 90
  const right = W - 115
  const top = 120
  const bottom = H - 230
  const sizes = [...r.sizes].sort((a, b) => a.articles - b.articles)
  // with several system variants a bar is one variant at one size, named after both
  const several = new Set(sizes.map((s) => s.variant?.label ?? '')).size > 1
  const tag = (s: (typeof sizes)[number]) => (several && s.variant ? `${s.variant.label} ${short(s.articles)}` : short(s.articles))
  const names = ENDPOINT_NAMES.filter((n) => sizes.some((s) => s.endpoints.some((e) => e.name === n)))
  const out: string[] = []
  const add = (s: string) => out.push(s)

  const rates = sizes.flatMap((s) => s.endpoints.flatMap((e) => [e.server.rps, e.bound.rps])).filter((x) => x > 0)
  const lo = Math.max(0, Math.floor(Math.log10(Math.max(1, Math.min(...rates, 1000)))))
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...rates, 10))))
  const y = (v: number) => bottom - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * (bottom - top)
  const p99s = sizes.flatMap((s) => s.endpoints.map((e) => e.server.latencyMs.p99)).filter((x) => x > 0)
  const plo = Math.min(0, Math.floor(Math.log10(Math.min(...p99s, 1))))
  const phi = Math.max(2, Math.ceil(Math.log10(Math.max(...p99s, 15))))
  const yp = (v: number) => bottom - ((Math.log10(Math.max(v, 10 ** plo)) - plo) / (phi - plo)) * (bottom - top)

  add(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
  )
  add(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  const m = r.machine
  add(
    `<text x="${left}" y="40" font-size="22" font-weight="bold" fill="#222">Conduit — requests/s per endpoint and database size (log scale)</text>`,
  )
  add(
    `<text x="${left}" y="66" font-size="13" fill="#555">${esc(
      `${r.date} · commit ${m.commit.slice(0, 10)}${m.dirty ? ' (+ uncommitted changes)' : ''} · Bun ${m.bun} · ${m.cpu}, ${m.cores} cores`,
    )}</text>`,
  )
  add(
    `<text x="${left}" y="86" font-size="13" fill="#555">${esc(
      `server pinned to core ${r.options.serverCore}${pinning(sizes)}, wrk ${m.wrk} pinned to core ${r.options.loadCore}: ${r.options.connections} connections, ${r.options.threads} thread, ${r.options.warmupS} s warm-up + ${r.options.durationS} s per endpoint; bound = minimal Bun.serve answering the same bytes`,
    )}</text>`,
  )

  // grid and left axis (req/s)
  for (let d = lo; d <= hi; d++) {
    for (const k of d < hi ? [1, 2, 5] : [1]) {
      const v = k * 10 ** d
      const yy = y(v).toFixed(1)
      add(`<line x1="${left}" x2="${right}" y1="${yy}" y2="${yy}" stroke="${k === 1 ? '#d0d0d0' : '#eeeeee'}" stroke-width="1"/>`)
      add(`<text x="${left - 8}" y="${(+yy + 4).toFixed(1)}" font-size="12" text-anchor="end" fill="#444">${short(v)}</text>`)
    }
  }
  add(
    `<text transform="translate(28 ${(top + bottom) / 2}) rotate(-90)" font-size="13" text-anchor="middle" fill="#333">requests / s (bars)</text>`,
  )
  // right axis (p99 ms)
  for (let d = plo; d <= phi; d++) {
    const v = 10 ** d
    add(`<line x1="${right}" x2="${right + 5}" y1="${yp(v).toFixed(1)}" y2="${yp(v).toFixed(1)}" stroke="#444"/>`)
    add(`<text x="${right + 9}" y="${(yp(v) + 4).toFixed(1)}" font-size="12" fill="#444">${fmtMs(v)} ms</text>`)
  }
  add(`<line x1="${right}" x2="${right}" y1="${top}" y2="${bottom}" stroke="#888"/>`)
  add(
    `<text transform="translate(${W - 14} ${(top + bottom) / 2}) rotate(90)" font-size="13" text-anchor="middle" fill="#333">p99 latency, ms (diamonds)</text>`,
  )
  const y15 = yp(15).toFixed(1)
  add(`<line x1="${left}" x2="${right}" y1="${y15}" y2="${y15}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="8 5"/>`)
  add(`<text x="${right + 9}" y="${(+y15 + 4).toFixed(1)}" font-size="12" fill="#d62728">15 ms goal</text>`)
  add(`<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#444"/>`)
  add(`<line x1="${left}" x2="${left}" y1="${top}" y2="${bottom}" stroke="#444"/>`)

  // groups
  const gw = (right - left) / Math.max(1, names.length)
  const bw = Math.min(34, (gw * 0.82) / Math.max(1, sizes.length))
  names.forEach((name, gi) => {
    const gx = left + gi * gw + (gw - bw * sizes.length) / 2
    sizes.forEach((s, si) => {
      const e = s.endpoints.find((x) => x.name === name)
      if (!e) return
      const x = gx + si * bw
      const cx = x + bw / 2
      const yb = y(e.bound.rps)
      const ys = y(e.server.rps)
      add(
        `<rect x="${(x + 1).toFixed(1)}" y="${yb.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(bottom - yb).toFixed(1)}" fill="none" stroke="${DARK[si % DARK.length]}" stroke-width="1.2" stroke-dasharray="4 3"><title>${esc(`${name} @ ${tag(s)}: bound ${Math.round(e.bound.rps)} req/s`)}</title></rect>`,
      )
      add(
        `<rect x="${(x + 3).toFixed(1)}" y="${ys.toFixed(1)}" width="${(bw - 6).toFixed(1)}" height="${(bottom - ys).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(`${name} @ ${tag(s)}: ${Math.round(e.server.rps)} req/s, p50 ${e.server.latencyMs.p50} ms, p99 ${e.server.latencyMs.p99} ms`)}</title></rect>`,
      )
      add(
        `<text transform="translate(${(cx + 4).toFixed(1)} ${(ys - 5).toFixed(1)}) rotate(-90)" font-size="11" fill="#222">${short(e.server.rps)}</text>`,
      )
      const yy = yp(e.server.latencyMs.p99)
      add(
        `<path d="M ${cx.toFixed(1)} ${(yy - 6).toFixed(1)} l 6 6 l -6 6 l -6 -6 z" fill="${DARK[si % DARK.length]}" stroke="#fff" stroke-width="1.2"><title>${esc(`${name} @ ${tag(s)}: p99 ${e.server.latencyMs.p99} ms`)}</title></path>`,
      )
    })
    const cx = left + gi * gw + gw / 2
    add(
      `<text x="${cx.toFixed(1)}" y="${bottom + 20}" font-size="13" font-weight="bold" text-anchor="middle" fill="#222">${esc(name)}</text>`,
    )
    sizes.forEach((s, si) => {
      const e = s.endpoints.find((x) => x.name === name)
      if (!e) return
      add(
        `<text x="${cx.toFixed(1)}" y="${bottom + 38 + si * 15}" font-size="11" text-anchor="middle" fill="${DARK[si % DARK.length]}">${esc(tag(s))}: ×${e.ratio.toFixed(2)}${noisy(e) ? '*' : ''} · ${fmtMs(e.server.latencyMs.p99)} ms</text>`,
      )
    })
  })
  add(
    `<text x="${left}" y="${bottom + 50 + sizes.length * 15}" font-size="11" fill="#555">under each endpoint, per size: ratio server / bound · p99${
      sizes.some((s) => s.endpoints.some(noisy))
        ? ` — * other processes took more than ${NOISY_PCT}% of the server or load core during that measurement`
        : ''
    }</text>`,
  )

  // legend
  const ly = H - 90
  let lx = left
  sizes.forEach((s, si) => {
    add(`<rect x="${lx}" y="${ly - 11}" width="14" height="14" fill="${COLORS[si % COLORS.length]}"/>`)
    const label = `${several && s.variant ? `${s.variant.label}, ` : ''}${s.articles.toLocaleString('en')} articles`
    add(`<text x="${lx + 20}" y="${ly}" font-size="13" fill="#222">${label}</text>`)
    lx += 40 + label.length * 7.5
  })
  add(`<rect x="${lx}" y="${ly - 11}" width="14" height="14" fill="none" stroke="#333" stroke-dasharray="4 3"/>`)
  add(`<text x="${lx + 20}" y="${ly}" font-size="13" fill="#222">bound (Bun.serve, same response bytes)</text>`)
  lx += 310
  add(`<path d="M ${lx + 7} ${ly - 12} l 7 7 l -7 7 l -7 -7 z" fill="#333"/>`)
  add(`<text x="${lx + 20}" y="${ly}" font-size="13" fill="#222">p99 latency (right axis)</text>`)
  const peaks = sizes.map((s) => `${tag(s)}: ${(s.peakRssBytes / 1048576).toFixed(0)} MB`).join(', ')
  const firsts = sizes.map((s) => `${tag(s)}: ${Math.min(...s.firstResponseMs).toFixed(0)} ms`).join(', ')
  add(
    `<text x="${left}" y="${ly + 30}" font-size="12" fill="#555">${esc(`server peak RSS — ${peaks} · fastest first response after start — ${firsts}`)}</text>`,
  )
  const counted = r.targets.filter((t) => !t.info)
  const passed = counted.filter((t) => t.pass).length
  add(
    `<text x="${left}" y="${ly + 50}" font-size="12" fill="#555">${esc(`targets of issue 5: ${passed} of ${counted.length} pass (details in latest.json)`)}</text>`,
  )
  add('</svg>')
  return `${out.join('\n')}\n`
}
