/// How a `ReplayingTransport` uses its HAR file and the network, as VCR's record modes do.
public enum HARMode: String, Sendable, Hashable, CaseIterable {
    /// Answer from the file only; a request it has no entry for fails with `notRecorded`. The default, so a
    /// test never touches the network by accident.
    case replay
    /// Answer from the file what it has; send what it does not have through the upstream transport and add
    /// it to the file.
    case recordMissing = "record-missing"
    /// Send everything through the upstream transport and write a new file with what it answered.
    case recordAll = "record-all"

    /// The environment variable a test run may set to change the mode of every `ServerAPIManager.replaying`
    /// helper without editing a test: `SAPI_HAR_MODE=record-missing swift test`.
    public static let environmentVariable = "SAPI_HAR_MODE"
}
