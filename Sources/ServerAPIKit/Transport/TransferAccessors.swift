// The transfer settings (`ServerAPI.Transfer`: timeouts, download target, size and decompression limits,
// redirects, socket), read and written as properties of a call and of the request a transport receives: a new
// per-call limit is a field of `ServerAPI.Transfer` and a property in each extension below.

extension ServerAPI {
    /// The total time one attempt may take (60 seconds by default).
    public var timeout: Duration {
        get { transfer.timeout }
        set { transfer.timeout = newValue }
    }

    /// The time connecting (TCP and TLS) may take, within `timeout`; `nil` lets the transport decide
    /// (its configuration's connect timeout, else `timeout`). See `connectTimeout(_:)`.
    public var connectTimeout: Duration? {
        get { transfer.connectTimeout }
        set { transfer.connectTimeout = newValue }
    }

    /// Fail an attempt whose transfer moves slower than this; `nil` uses the transport's default.
    /// See `stallTimeout(below:for:)`.
    public var stallTimeout: StallTimeout? {
        get { transfer.stallTimeout }
        set { transfer.stallTimeout = newValue }
    }

    /// Where to write the body, for a download.
    public var download: DownloadTarget? {
        get { transfer.download }
        set { transfer.download = newValue }
    }

    /// The largest response body accepted, in bytes; `nil` for the default of a body held in memory (64 MiB,
    /// or the manager's `Configuration.maxResponseSize`) and none for a download or a stream; `Int64.max`
    /// for no limit.
    public var maxResponseSize: Int64? {
        get { transfer.maxResponseSize }
        set { transfer.maxResponseSize = newValue }
    }

    /// The most a content-coded response body may expand (decoded bytes per encoded byte); `nil` for no
    /// limit. `DecompressionRule.defaultRatio` (100) unless set.
    public var maxDecompressionRatio: Int? {
        get { transfer.maxDecompressionRatio }
        set { transfer.maxDecompressionRatio = newValue }
    }

    /// Whether and how far redirects are followed (up to 10 by default).
    public var redirects: RedirectPolicy {
        get { transfer.redirects }
        set { transfer.redirects = newValue }
    }

    /// The Unix-domain socket the call connects to instead of its URL's host; `nil` for the network.
    /// A `http+unix://` URL sets it too.
    public var unixSocketPath: String? {
        get { transfer.unixSocketPath }
        set { transfer.unixSocketPath = newValue }
    }
}

extension TransportRequest {
    /// The call's ``ServerAPI/timeout`` (`transfer.timeout`).
    public var timeout: Duration {
        get { transfer.timeout }
        set { transfer.timeout = newValue }
    }

    /// The call's ``ServerAPI/connectTimeout`` (`transfer.connectTimeout`).
    public var connectTimeout: Duration? {
        get { transfer.connectTimeout }
        set { transfer.connectTimeout = newValue }
    }

    /// The call's ``ServerAPI/stallTimeout`` (`transfer.stallTimeout`).
    public var stallTimeout: StallTimeout? {
        get { transfer.stallTimeout }
        set { transfer.stallTimeout = newValue }
    }

    /// The call's ``ServerAPI/download`` (`transfer.download`).
    public var download: DownloadTarget? {
        get { transfer.download }
        set { transfer.download = newValue }
    }

    /// The call's ``ServerAPI/maxResponseSize`` (`transfer.maxResponseSize`).
    public var maxResponseSize: Int64? {
        get { transfer.maxResponseSize }
        set { transfer.maxResponseSize = newValue }
    }

    /// The call's ``ServerAPI/maxDecompressionRatio`` (`transfer.maxDecompressionRatio`).
    public var maxDecompressionRatio: Int? {
        get { transfer.maxDecompressionRatio }
        set { transfer.maxDecompressionRatio = newValue }
    }

    /// The call's ``ServerAPI/redirects`` (`transfer.redirects`).
    public var redirects: RedirectPolicy {
        get { transfer.redirects }
        set { transfer.redirects = newValue }
    }

    /// The call's ``ServerAPI/unixSocketPath`` (`transfer.unixSocketPath`).
    public var unixSocketPath: String? {
        get { transfer.unixSocketPath }
        set { transfer.unixSocketPath = newValue }
    }
}
