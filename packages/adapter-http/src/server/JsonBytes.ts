/**
 * The structural bytes of a JSON text and the one scan over them that both the shape guard (`JsonBodyShape`) and the
 * sliced parser (`JsonBodyParse`) use: strings skipped (escapes included), nesting followed, containers and values
 * counted. Malformed JSON is not judged here (the parser reports it), only scanned as far as it goes.
 */

export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const OPEN_OBJECT = 0x7b
export const OPEN_ARRAY = 0x5b
export const CLOSE_OBJECT = 0x7d
export const CLOSE_ARRAY = 0x5d
export const COMMA = 0x2c
export const COLON = 0x3a

export const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d

/** The limit a scan crossed first. */
export type JsonScanLimit = "depth" | "containers" | "values" | "members"

export interface JsonScanLimits {
  /** Nesting of objects and arrays. */
  readonly maxDepth: number
  /** Objects and arrays. */
  readonly maxContainers: number
  /** Every value (scalars, objects, arrays, object members). */
  readonly maxValues: number
  /** Members of any one object (each object counted on its own, nested ones apart). */
  readonly maxMembers: number
}

export const NO_LIMITS: JsonScanLimits = {
  maxDepth: Infinity,
  maxContainers: Infinity,
  maxValues: Infinity,
  maxMembers: Infinity
}

/** Where a scan stands; carried from one slice of a text to the next. */
export interface JsonScan {
  /** Nesting, from where the scan started. */
  depth: number
  containers: number
  values: number
  inString: boolean
  escaped: boolean
  /** The last member separator (comma) met at depth 0, or -1. */
  lastComma: number
  /** With `untilClose`: the closing bracket of the container the scan started inside, or -1. */
  close: number
  /**
   * Per nesting level opened by this scan (index = depth): the members met so far when it is an object, -1 for an
   * array. A member is counted at its colon, which only an object's own member has outside strings.
   */
  members: Array<number>
}

export const startScan = (): JsonScan => ({
  depth: 0,
  containers: 0,
  values: 0,
  inString: false,
  escaped: false,
  lastComma: -1,
  close: -1,
  members: []
})

/**
 * Advances `state` over `bytes[from, to)` and answers the first of `limits` crossed. With `untilClose` it stops at a
 * closing bracket at depth 0, the end of the container it started inside, and records it in `state.close`.
 */
export const scanJson = (
  bytes: Uint8Array,
  from: number,
  to: number,
  state: JsonScan,
  limits: JsonScanLimits,
  untilClose: boolean
): JsonScanLimit | undefined => {
  // Locals while scanning, `state` written once at the end: this loop reads every byte of every JSON body.
  let { containers, depth, escaped, inString, lastComma, values } = state
  const { members } = state
  const { maxContainers, maxDepth, maxMembers, maxValues } = limits
  let crossed: JsonScanLimit | undefined
  let close = -1
  for (let i = from; i < to; i++) {
    const b = bytes[i]!
    if (inString) {
      if (escaped) escaped = false
      else if (b === BACKSLASH) escaped = true
      else if (b === QUOTE) inString = false
      continue
    }
    if (b === QUOTE) {
      inString = true
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      values++
      if (++containers > maxContainers) {
        crossed = "containers"
        break
      }
      if (++depth > maxDepth) {
        crossed = "depth"
        break
      }
      members[depth] = b === OPEN_OBJECT ? 0 : -1
    } else if (b === COLON) {
      // Depth 0 is a container this scan started inside (`untilClose`), whose kind it does not know: not counted.
      if (depth > 0 && members[depth]! >= 0 && ++members[depth]! > maxMembers) {
        crossed = "members"
        break
      }
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      if (depth === 0 && untilClose) {
        close = i
        break
      }
      depth--
    } else if (b === COMMA) {
      if (depth === 0) lastComma = i
      if (++values > maxValues) {
        crossed = "values"
        break
      }
    }
  }
  Object.assign(state, { close, containers, depth, escaped, inString, lastComma, values })
  return crossed
}
