// Text assets embedded at build time (`import x from './f.sql' with { type: 'text' }`).
declare module '*.sql' {
  const text: string
  export default text
}
