// Text assets embedded at build time (`import x from './f.sql' with { type: 'text' }`).
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.js' {
  const path: string
  export default path
}
declare module '*.css' {
  const path: string
  export default path
}
declare module '*.svg' {
  const path: string
  export default path
}
