// Host modules this plugin uses at run time, resolved through the host's own module farm
// ($DSH_HOME/profiles/node_modules). Imported softly so that the pure parts of lib/ can be
// unit-tested without a host; inside DSH they always resolve.
async function soft(specifier) {
  try {
    return await import(specifier)
  } catch {
    return undefined
  }
}
const cordis = await soft('@deepseek-ai/cordis')
const tools = await soft('@deepseek-ai/dsh-tools')
const llm = await soft('@deepseek-ai/dsh-llm')

/** True when the host's modules resolved (inside DSH). */
export const inHost = cordis !== undefined

/** The cordis Service base class; outside a host, a stand-in that registers itself with ctx.set. */
export const Service = cordis?.Service ?? class {
  constructor(ctx, name) {
    if (ctx && typeof ctx.set === 'function') ctx.set(name, this)
  }
}

/** defineTool from dsh-tools (it normalises a definition); identity outside a host. */
export const defineTool = tools?.defineTool ?? ((def) => def)

/** createUserMessage from dsh-llm, or a plain equivalent outside a host. */
export const createUserMessage = llm?.createUserMessage ?? ((m) => ({ role: 'user', ...m }))
