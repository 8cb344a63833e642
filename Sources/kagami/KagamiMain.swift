import KagamiCLI

#if canImport(Glibc)
import Glibc
#endif

@main
struct KagamiMain {
    static func main() async {
        #if canImport(Glibc)
        // A captured body is held in the buffers NIO read it into (up to 64 KiB each), a
        // megabyte's worth per 1 MB exchange, all freed once it is written. With glibc's
        // defaults the freed memory went back to the system (and larger pieces were mapped
        // apart), and the next reads faulted it in again page by page: 150,000–350,000 minor
        // faults in 8 s of 1 MB bodies, and 10% more CPU per exchange. From the heap, a freed
        // body's memory serves the next one; at most 16 MiB free at the top of a heap stays with
        // the process.
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
