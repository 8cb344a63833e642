import KagamiCLI

#if canImport(Glibc)
import Glibc
#endif

@main
struct KagamiMain {
    static func main() async {
        #if canImport(Glibc)
        // A captured body is one allocation of up to its announced length (FlowRecorder reserves
        // at most 4 MiB). Above glibc's default threshold (128 KiB, rising with frees) each was
        // mapped, faulted in page by page and unmapped again: 10–15% of the proxy's CPU with
        // 1 MB bodies. From the heap, a freed body's memory serves the next one; at most 16 MiB
        // free at the top of a heap stays with the process.
        // (`mallopt` is in <malloc.h>, which the Glibc module leaves out.)
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3
            _ = mallopt(mmapThreshold, 8 << 20)
            _ = mallopt(trimThreshold, 16 << 20)
        }
        #endif
        await Kagami.main(nil)
    }
}
