internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a hop is with a Digest challenge: libcurl answers a `401` carrying `WWW-Authenticate: Digest`
/// itself, by sending the request again with the credentials, within one transfer. The challenge's head
/// and body are not the caller's: they are kept aside until the answer's head arrives, and handed to the
/// exchange as the response only when libcurl did not answer (a challenge it cannot read).
enum DigestChallenge {
    case none
    /// The challenge arrived; its body so far (up to `CurlTransfer.maxChallengeBody` bytes).
    case pending(status: Int, headers: HTTPHeaders, body: Data)
    /// libcurl answered it: every further head is the exchange's.
    case answered
}

extension CurlTransfer {
    /// The most of a challenge's body kept for the case where it turns out to be the response.
    static let maxChallengeBody = 64 << 10

    /// Sets the request's challenge credentials for this hop. A redirect to another origin has none
    /// (`RedirectRule` drops them), and libcurl never follows redirects here, so they reach no other host
    /// (`CURLOPT_UNRESTRICTED_AUTH` stays off in any case).
    func configureCredentials() throws(ServerAPIError) {
        challenge = .none
        guard let credentials = request.credentials else { return }
        easy.needsReset = true
        guard credentials.scheme == .digest else {
            throw ServerAPIError(
                .invalidRequest, "CurlTransport cannot answer \(credentials.scheme.rawValue) authentication challenges")
        }
        try easy.set(CURLOPT_HTTPAUTH, Int(ccurl_auth_digest()))
        try easy.set(CURLOPT_USERNAME, credentials.user)
        try easy.set(CURLOPT_PASSWORD, credentials.password)
    }

    /// Whether the head that just ended is a Digest challenge libcurl will answer: the first `401` of
    /// the hop with a Digest `WWW-Authenticate`, for a request with Digest credentials.
    func interceptsChallenge() -> Bool {
        guard case .none = challenge, status == 401, request.credentials?.scheme == .digest,
            headers.values(for: "WWW-Authenticate").contains(where: {
                $0.drop(while: { $0 == " " || $0 == "\t" }).lowercased().hasPrefix("digest")
            })
        else { return false }
        challenge = .pending(status: status, headers: headers, body: Data())
        return true
    }

    /// Keeps the bytes of a pending challenge's body aside; `false` when they belong to the exchange.
    func keepsChallengeBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard case .pending(let status, let headers, var body) = challenge else { return false }
        if body.count < Self.maxChallengeBody {
            body.append(contentsOf: bytes.prefix(Self.maxChallengeBody - body.count))
        }
        challenge = .pending(status: status, headers: headers, body: body)
        return true
    }

    /// A transfer that ended on a challenge libcurl did not answer: the challenge is the response, as
    /// for a request without credentials.
    func replayUnansweredChallenge() {
        guard case .pending(let challengeStatus, let challengeHeaders, let challengeBody) = challenge else { return }
        challenge = .answered
        status = challengeStatus
        headers = challengeHeaders
        guard headEnded(), !challengeBody.isEmpty else { return }
        _ = challengeBody.withUnsafeBytes { receiveBody($0) }
    }
}
