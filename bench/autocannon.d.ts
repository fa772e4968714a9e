/** The part of autocannon's programmatic API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly max: number
  }
  export interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly amount?: number
    readonly pipelining?: number
    readonly method?: string
    readonly headers?: Record<string, string>
  }
  export interface Result {
    readonly requests: Histogram & { readonly total: number }
    readonly latency: Histogram
    readonly throughput: Histogram
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly duration: number
    readonly "2xx": number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
