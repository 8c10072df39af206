internal import CCurl
import ServerAPIKit

extension CurlTransfer {
    /// The stall limit of the current request: its own, else the transport's.
    var stallTimeout: StallTimeout? { request.stallTimeout ?? settings.stallTimeout }

    /// Sets `CURLOPT_LOW_SPEED_LIMIT`/`TIME`: libcurl fails the transfer with "Operation too slow" when
    /// its speed stays below the limit for that many seconds (whole seconds: the duration is rounded up).
    /// Without a limit, both are 0 (none), as a reused handle may hold the last transfer's.
    func configureStallTimeout() throws(ServerAPIError) {
        guard let stall = stallTimeout else {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, 0)
            try easy.set(CURLOPT_LOW_SPEED_TIME, 0)
            return
        }
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, Int(clamping: stall.bytesPerSecond))
        try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, (stall.duration.curlMilliseconds + 999) / 1000))
    }
}
