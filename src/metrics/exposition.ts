/**
 * The Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/).
 */
export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * One metric family as one process reports it: its samples are finished
 * lines (name, labels, value), so the families of several workers are merged
 * by name without parsing (a family's lines must come together, under one
 * HELP and one TYPE).
 */
export interface Family {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  samples: string[]
}

/** A label value escaped as the format requires. */
export const labelValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')

/** A number as the format writes it (`NaN`, `+Inf`, `-Inf` included). */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  if (v === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(v)
}

/** A family of one sample per label set; `base` labels (`worker="2"`) go first on each. */
export function family(
  name: string,
  type: Family['type'],
  help: string,
  base: string,
  values: readonly (readonly [labels: string, value: number])[],
): Family {
  return {
    name,
    help,
    type,
    samples: values.map(([labels, v]) => {
      const all = [base, labels].filter(Boolean).join(',')
      return `${name}${all ? `{${all}}` : ''} ${formatValue(v)}`
    }),
  }
}

/** Every process's families as one exposition: per name in first-seen order, HELP and TYPE once, then every process's samples. */
export function render(processes: readonly Family[][]): string {
  const merged = new Map<string, Family>()
  for (const families of processes) {
    for (const f of families) {
      const m = merged.get(f.name)
      if (m) m.samples.push(...f.samples)
      else merged.set(f.name, { ...f, samples: [...f.samples] })
    }
  }
  let out = ''
  for (const f of merged.values()) {
    out += `# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${f.name} ${f.type}\n`
    for (const s of f.samples) out += `${s}\n`
  }
  return out
}
