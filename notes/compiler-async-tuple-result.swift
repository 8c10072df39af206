// An async closure returns a tuple whose first element is known before a suspension and whose second is the
// result of `try await` inside `do`/`catch`. Built with -O by Swift 6.3.1, the first element is lost (reads 0);
// with -Onone it is right. See compiler-async-tuple-result.md.
//
//   swiftc -O compiler-async-tuple-result.swift -o /tmp/repro && /tmp/repro     # prints "1 0", "2 0": wrong
//   swiftc -Onone compiler-async-tuple-result.swift -o /tmp/repro && /tmp/repro # prints "1 1", "2 2"
struct Big { var a = 7, b = 8, c = 9, d = 10, e = 11 }  // large enough to be returned indirectly
struct Failure: Error {}

func make(_ i: Int) async throws -> Big {
    await Task.yield()
    if i < 0 { throw Failure() }
    return Big()
}

for i in 1...2 {
    let task = Task { () -> (Int, Big?) in
        do { return (i, try await make(i)) } catch { return (i, nil) }
    }
    print(i, await task.value.0)
}
