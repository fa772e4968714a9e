// Every entry point of every package, imported as a host would: from node_modules, with plain node.
const entries = [
  "@feedback/core",
  "@feedback/testing",
  "@feedback/client",
  "@feedback/client/effect",
  "@feedback/client/api",
  "@feedback/adapter-memory",
  "@feedback/adapter-memory/testing",
  "@feedback/adapter-postgres",
  "@feedback/adapter-postgres/testing",
  "@feedback/adapter-redis",
  "@feedback/adapter-http",
  "@feedback/adapter-http/server"
]
for (const entry of entries) {
  const module = await import(entry)
  const names = Object.keys(module)
  if (names.length === 0) throw new Error(`${entry} exports nothing`)
  console.log(`${entry}: ${names.length} exports`)
}
