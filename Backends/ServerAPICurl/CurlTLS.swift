internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport's `TLSOptions` in the form libcurl takes them, checked and worked out once when the
/// transport is created: pins as `sha256//…` lists per host, key files already hashed, the client
/// certificate's files known to be readable.
struct CurlTLS {
    /// libcurl's `CURLOPT_PINNEDPUBLICKEY` value for each host that an entry names (lower-cased).
    var pinsByHost: [String: String] = [:]
    /// The value for every other host, when entries without hosts exist.
    var defaultPins: String?
    var clientCertificate: ClientCertificate?
    /// The hosts allowed below TLS 1.2 (lower-cased).
    var legacyProtocolHosts: Set<String> = []

    /// The prepared options, or why they cannot be used.
    typealias Prepared = Result<CurlTLS, ServerAPIError>

    /// Prepares `options`, keeping the error instead of throwing it.
    static func prepare(_ options: TLSOptions) -> Prepared {
        Result { () throws(ServerAPIError) in try CurlTLS(options) }
    }

    /// Checks `options` and prepares them.
    /// - Parameter options: The transport's TLS options.
    /// - Throws: `ServerAPIError`: `invalidRequest` for a pin that is not a base64 SHA-256 digest or a key
    ///   file that cannot be read or is not a public key; `tls` (`clientCertificateProblem`) for a client
    ///   certificate or key file that is missing, unreadable, in the wrong format, or encrypted without a
    ///   passphrase. The message names the file.
    init(_ options: TLSOptions) throws(ServerAPIError) {
        var hosts = Set<String>()
        for entry in options.pins where !entry.isEmpty { hosts.formUnion(entry.hosts.map { $0.lowercased() }) }
        for host in hosts {
            if let pins = options.pins(for: host) { pinsByHost[host] = try Self.curlPins(pins) }
        }
        let everyHost = options.pins.filter { !$0.isEmpty && $0.hosts.isEmpty }
        if !everyHost.isEmpty {
            defaultPins = try Self.curlPins(
                PublicKeyPins(sha256: everyHost.flatMap(\.sha256), keyFiles: everyHost.flatMap(\.keyFiles)))
        }
        if let certificate = options.clientCertificate { try Self.check(certificate) }
        clientCertificate = options.clientCertificate
        legacyProtocolHosts = Set(options.legacyProtocolHosts.map { $0.lowercased() })
    }

    /// Whether what `apply` sets depends on the request's host.
    var dependsOnHost: Bool { !pinsByHost.isEmpty || !legacyProtocolHosts.isEmpty }

    /// Sets the pins that apply to `host` and the client certificate on `easy`.
    /// - Parameter host: The request's host, worked out only when some pins name hosts (a URL's host is
    ///   parsed again each time it is read).
    func apply(to easy: CurlEasyHandle, host: @autoclosure () -> String) throws(ServerAPIError) {
        // TLS 1.2 is the floor (libcurl's own default takes 1.0), to the server and to an HTTPS proxy alike, unless
        // the host is one the options let down.
        let legacy = !legacyProtocolHosts.isEmpty && legacyProtocolHosts.contains(host().lowercased())
        let floor = legacy ? CURL_SSLVERSION_TLSv1_0 : CURL_SSLVERSION_TLSv1_2
        try easy.set(CURLOPT_SSLVERSION, floor)
        try easy.set(CURLOPT_PROXY_SSLVERSION, CURL_SSLVERSION_TLSv1_2)
        if let pins = (pinsByHost.isEmpty ? nil : pinsByHost[host().lowercased()]) ?? defaultPins {
            try easy.set(CURLOPT_PINNEDPUBLICKEY, pins)
        }
        if let certificate = clientCertificate {
            try easy.set(CURLOPT_SSLCERT, certificate.certificateFile.path)
            try easy.set(CURLOPT_SSLCERTTYPE, certificate.format.rawValue)
            if let key = certificate.keyFile {
                try easy.set(CURLOPT_SSLKEY, key.path)
                try easy.set(CURLOPT_SSLKEYTYPE, certificate.format.rawValue)
            }
            if let passphrase = certificate.passphrase { try easy.set(CURLOPT_KEYPASSWD, passphrase) }
        }
    }

    // MARK: Pins

    /// `sha256//A;sha256//B`: every digest, key files hashed here, so that digests and files can be mixed
    /// (libcurl takes either one file or a list of digests) and a bad file is reported now.
    static func curlPins(_ pins: PublicKeyPins) throws(ServerAPIError) -> String {
        var digests: [String] = []
        for pin in pins.sha256 {
            let base64 = pin.hasPrefix("sha256//") ? String(pin.dropFirst(8)) : pin
            guard let digest = Data(base64Encoded: base64), digest.count == 32 else {
                throw ServerAPIError(
                    .invalidRequest,
                    "the public-key pin \"\(pin)\" is not a base64 SHA-256 digest (44 characters ending in \"=\")")
            }
            digests.append(base64)
        }
        for file in pins.keyFiles { digests.append(try digest(ofPublicKeyFile: file)) }
        return digests.map { "sha256//" + $0 }.joined(separator: ";")
    }

    /// The base64 SHA-256 of the DER SubjectPublicKeyInfo in a PEM (`PUBLIC KEY`) or DER file.
    static func digest(ofPublicKeyFile file: URL) throws(ServerAPIError) -> String {
        let contents: Data
        do {
            contents = try Data(contentsOf: file)
        } catch {
            throw ServerAPIError(
                .invalidRequest, "the pinned public key file \(file.path) cannot be read", underlying: error)
        }
        let der: Data
        if let text = String(data: contents, encoding: .utf8), text.contains("-----BEGIN") {
            guard let block = pemBlock("PUBLIC KEY", in: text) else {
                throw ServerAPIError(
                    .invalidRequest,
                    "\(file.path) holds no PEM PUBLIC KEY block (from a certificate: "
                        + "openssl x509 -in cert.pem -pubkey -noout > key.pub)")
            }
            der = block
        } else {
            // DER: a SubjectPublicKeyInfo is an ASN.1 SEQUENCE.
            guard contents.first == 0x30 else {
                throw ServerAPIError(.invalidRequest, "\(file.path) is neither a PEM nor a DER public key")
            }
            der = contents
        }
        var hash = SHA256()
        hash.update(der)
        return Data(hash.finalize()).base64EncodedString()
    }

    /// The bytes of the first PEM block labelled `label` (`-----BEGIN label-----`).
    static func pemBlock(_ label: String, in text: String) -> Data? {
        guard let begin = text.firstRange(of: "-----BEGIN \(label)-----"),
            let end = text[begin.upperBound...].firstRange(of: "-----END \(label)-----")
        else { return nil }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64))
    }

    // MARK: Client certificate

    /// What can be checked without a handshake: the files exist and are readable, PEM files hold a
    /// certificate and a private key, and an encrypted key comes with a passphrase. A wrong passphrase or
    /// a key that does not match shows at the first TLS connection (`clientCertificateProblem`).
    static func check(_ certificate: ClientCertificate) throws(ServerAPIError) {
        func problem(_ sentence: String) -> ServerAPIError {
            .tls(.clientCertificateProblem, sentence)
        }
        func read(_ file: URL, _ role: String) throws(ServerAPIError) -> Data {
            do {
                return try Data(contentsOf: file)
            } catch {
                var failure = problem("the client \(role) file \(file.path) cannot be read")
                failure.underlying = error
                throw failure
            }
        }
        let certificateData = try read(certificate.certificateFile, "certificate")
        var keyData: Data?
        if let keyFile = certificate.keyFile { keyData = try read(keyFile, "key") }
        guard certificate.format == .pem else { return }
        let certificateText = String(decoding: certificateData, as: UTF8.self)
        guard certificateText.contains("-----BEGIN CERTIFICATE-----") else {
            throw problem("\(certificate.certificateFile.path) holds no PEM certificate")
        }
        let keyText = keyData.map { String(decoding: $0, as: UTF8.self) } ?? certificateText
        let keyPath = (certificate.keyFile ?? certificate.certificateFile).path
        guard keyText.contains("PRIVATE KEY-----") else {
            throw problem("\(keyPath) holds no PEM private key")
        }
        let encrypted = keyText.contains("ENCRYPTED PRIVATE KEY-----") || keyText.contains("Proc-Type: 4,ENCRYPTED")
        if encrypted, certificate.passphrase == nil {
            throw problem("the client key \(keyPath) is encrypted and no passphrase was given")
        }
    }
}
